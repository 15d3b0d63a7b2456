"""The command-line shell: argv, environment, config files and terminal rendering.

This is the only package that reads ``os.environ`` and argv.
"""
