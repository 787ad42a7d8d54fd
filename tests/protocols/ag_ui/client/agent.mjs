// Drives the adapter with AG-UI's own client, @ag-ui/client's HttpAgent, as an
// application would: runAgent() with a subscriber, abortRun(), a thread opened again.
//
//   node agent.mjs <modules dir> <plan JSON>
//
// The plan: {"url", "cookie", "csrf", "steps": [{"name", "thread", "text", "abort"}]}.
// Each step runs one HttpAgent on its thread and prints one JSON line: the events it
// received (type, and when, in ms since the step began), the agent's messages after
// the run, and the error that ended it, if any.
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, planText] = process.argv.slice(2);
// The client is installed in the test tooling's cache (bin/test), not beside this file.
const require = createRequire(join(modules, "package.json"));
const { HttpAgent } = require("@ag-ui/client");
const plan = JSON.parse(planText);

async function step({ name, thread, text, abort }) {
  const agent = new HttpAgent({
    url: plan.url,
    threadId: thread,
    headers: { Cookie: plan.cookie, "X-CSRFToken": plan.csrf },
  });
  if (text !== undefined) {
    agent.addMessage({ id: `m-${name}`, role: "user", content: text });
  }
  const began = Date.now();
  const events = [];
  let error = null;
  const subscriber = {
    onEvent({ event }) {
      events.push({ type: event.type, at: Date.now() - began, code: event.code });
      if (abort && event.type === "TEXT_MESSAGE_CONTENT") {
        agent.abortRun(); // the application's Stop
      }
    },
  };
  try {
    await agent.runAgent({}, subscriber);
  } catch (caught) {
    error = { message: String(caught.message), status: caught.status ?? null };
  }
  return { name, events, messages: agent.messages, error };
}

for (const planned of plan.steps) {
  process.stdout.write(JSON.stringify(await step(planned)) + "\n");
}
