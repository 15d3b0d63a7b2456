// Drives a Codex-compatible CLI through the official TypeScript SDK (@openai/codex-sdk, pinned in
// package.json) and prints what the SDK returned as one JSON object on stdout. Used by
// tests/cli/test_typescript_sdk.py against mini-codex and against the real Codex CLI.
//
// node drive_sdk.mjs CLI BASE_URL WORK_DIR EXTRA_DIR IMAGE
//
// The scenario (the server's replies are scripted by the test, one per model request):
//   1. thread.run: the model runs `echo sdk-hello` (exec_command), then answers "ran it";
//   2. thread.runStreamed on the same thread: every event, in order;
//   3. thread.run with an outputSchema;
//   4. a new Codex instance, resumeThread(id).run with text + local_image input;
//   5. a request the server fails: the SDK must reject.
import { Codex } from "@openai/codex-sdk";

const [cli, baseUrl, workDir, extraDir, image] = process.argv.slice(2);
const threadOptions = {
  workingDirectory: workDir,
  skipGitRepoCheck: true,
  sandboxMode: "danger-full-access",
  approvalPolicy: "never",
  model: "gpt-5.5",
  modelReasoningEffort: "low",
  networkAccessEnabled: false,
  webSearchEnabled: false,
  additionalDirectories: [extraDir],
};
const schema = {
  type: "object",
  properties: { answer: { type: "integer" } },
  required: ["answer"],
  additionalProperties: false,
};
const makeCodex = () => new Codex({ codexPathOverride: cli, baseUrl, apiKey: "sk-sdk-test" });
const out = {};

const thread = makeCodex().startThread(threadOptions);
const first = await thread.run("run the command");
out.run = { threadId: thread.id, items: first.items, finalResponse: first.finalResponse, usage: first.usage };

const { events } = await thread.runStreamed("and again");
out.streamed = [];
for await (const event of events) out.streamed.push(event);
out.streamedThreadId = thread.id;

const structured = await thread.run("answer as JSON", { outputSchema: schema });
out.structured = { finalResponse: structured.finalResponse, threadId: thread.id };

const resumed = makeCodex().resumeThread(thread.id, threadOptions);
const withImage = await resumed.run([
  { type: "text", text: "what is in the picture?" },
  { type: "local_image", path: image },
]);
out.resumed = { threadId: resumed.id, finalResponse: withImage.finalResponse };

try {
  await resumed.run("this request fails");
  out.failure = null;
} catch (error) {
  out.failure = String(error && error.message);
}
process.stdout.write(JSON.stringify(out) + "\n");
