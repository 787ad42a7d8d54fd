// A chat page on @ag-ui/client, as an application would write one: HttpAgent on the
// thread the page's URL names (#<thread>), a log of messages, Send and Stop. esbuild
// bundles it in the tests (tests/protocols/ag_ui/test_browser.py).
import { HttpAgent } from "@ag-ui/client";

const log = document.querySelector("[role=log]");
const form = document.querySelector("form");
const stop = document.querySelector("#stop");
const csrfToken = document.cookie.match(/csrftoken=([^;]+)/)?.[1] ?? "";
const agent = new HttpAgent({
  url: "/ag-ui/",
  threadId: decodeURIComponent(location.hash.slice(1)),
  headers: { "X-CSRFToken": csrfToken },
});

function shown(kind, attributes, text) {
  const item = document.createElement("div");
  item.dataset.kind = kind;
  Object.assign(item.dataset, attributes);
  item.textContent = text; // model output is text, never HTML
  log.append(item);
  return item;
}

const bubbles = new Map();
const subscriber = {
  onTextMessageStartEvent({ event }) {
    bubbles.set(event.messageId, shown("message", { role: "assistant" }, ""));
  },
  onTextMessageContentEvent({ event }) {
    bubbles.get(event.messageId).textContent += event.delta;
  },
  onToolCallStartEvent({ event }) {
    shown("tool_call", { callId: event.toolCallId }, event.toolCallName);
  },
  onToolCallResultEvent({ event }) {
    shown("tool_output", { callId: event.toolCallId }, event.content);
  },
  onRunFinishedEvent({ outcome }) {
    log.dataset.status = outcome;
  },
  onRunErrorEvent({ event }) {
    // The client reports its own abort (Stop) as a run error with code "abort".
    log.dataset.status = event.code === "abort" ? "stopped" : "failed";
    shown("error", { code: event.code ?? "" }, event.message);
  },
};

form.addEventListener("submit", async (submitted) => {
  submitted.preventDefault();
  const text = form.elements.text.value;
  shown("message", { role: "user" }, text);
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  log.dataset.status = "running";
  try {
    await agent.runAgent({}, subscriber);
  } catch (error) {
    if (log.dataset.status === "running") {
      log.dataset.status = error.name === "AbortError" ? "stopped" : "failed";
    }
    shown("error", { status: String(error.status ?? "") }, String(error.message));
  }
});
stop.addEventListener("click", () => agent.abortRun()); // the server stops the run
