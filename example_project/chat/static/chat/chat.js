/*
 * The chat page: one websocket per open conversation, speaking the wire protocol of
 * django-agent-sessions (docs/wire-protocol.md), plus the sidebar and the buttons.
 *
 * Plain ES modules served as static files, no build step. Model output only ever reaches
 * the page through textContent (transcript.js); the page's Content-Security-Policy forbids
 * inline scripts as a second line of defence.
 */
import { Connection } from "./connection.js";
import { Transcript, element } from "./transcript.js";

const body = document.body;
const config = body.dataset;
const strings = document.getElementById("chat-strings").dataset;
const $ = (id) => document.getElementById(id);
const ui = {
  form: $("composer"),
  input: $("message"),
  send: $("send-button"),
  stop: $("stop-button"),
  clear: $("clear-button"),
  status: $("connection-status"),
  error: $("error-banner"),
  announcer: $("announcer"),
  list: $("conversation-list"),
  title: $("conversation-title"),
  toggle: $("sidebar-toggle"),
};
const transcript = new Transcript($("transcript"), strings);
let activeRun = null; // the run_id of the conversation's running run, if any

/* ---------- feedback ---------- */

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

function hideError() {
  ui.error.hidden = true;
  ui.error.textContent = "";
}

function announce(text) {
  // Screen readers hear the outcome once, not every streamed word.
  ui.announcer.textContent = "";
  window.setTimeout(() => {
    ui.announcer.textContent = text;
  }, 50);
}

function setBusy(runId) {
  activeRun = runId;
  const busy = runId !== null;
  ui.stop.hidden = !busy;
  ui.stop.disabled = false;
  ui.send.hidden = busy;
  ui.clear.disabled = busy;
  updateComposer();
}

function updateComposer() {
  ui.send.disabled = !connection.isOpen || activeRun !== null;
}

/* ---------- frames from the server ---------- */

const handlers = {
  history(frame) {
    transcript.reset();
    (frame.items || []).forEach((item) => transcript.render(item));
    // A run in flight: its items so far, then the text of the message being written.
    const active = frame.active_run;
    setBusy(active ? active.run_id : null);
    if (active) {
      (active.items || []).forEach((item) => transcript.render(item));
      if (active.text) transcript.appendDelta(active.run_id, active.text);
    }
    // A run waiting for decisions holds the conversation, like a running one.
    const pending = frame.pending_approvals || [];
    pending.forEach((request) => transcript.approval(request, decide));
    if (!active && pending.length) setBusy(pending[0].run_id);
    transcript.showEmptyHint();
    transcript.scrollToEnd();
  },
  "approval.requested"(frame) {
    transcript.finishReply();
    setBusy(frame.run_id);
    transcript.approval(frame, decide);
    announce(strings.approvalNeeded + ": " + frame.name);
  },
  "approval.resolved"(frame) {
    transcript.resolveApproval(frame.call_id, frame.approve, frame.reason);
  },
  "run.started"(frame) {
    hideError();
    setBusy(frame.run_id);
  },
  "text.delta"(frame) {
    if (activeRun === null) setBusy(frame.run_id);
    transcript.appendDelta(frame.run_id, frame.delta);
  },
  "item.completed"(frame) {
    const item = frame.item || {};
    if (item.kind === "message" && item.role === "user") {
      if (!transcript.confirmEcho(item.text)) transcript.render(item);
    } else if (item.kind === "message" && transcript.isStreaming(frame.run_id)) {
      transcript.finishReply(item.text);
    } else {
      transcript.finishReply();
      transcript.render(item);
    }
  },
  "run.completed"() {
    transcript.finishReply();
    setBusy(null);
    announce(strings.replied);
    refreshConversations();
  },
  "run.cancelled"() {
    // A half-written reply is not in the history: say that it stopped.
    if (!transcript.finishReply(undefined, strings.stopped)) transcript.note(strings.stopped);
    setBusy(null);
    announce(strings.stopped);
    refreshConversations();
  },
  "run.failed"(frame) {
    transcript.finishReply();
    setBusy(null);
    const error = frame.error || {};
    const text = strings.failed + ": " + (error.message || error.code || "");
    transcript.note(text, "run-error");
    showError(text);
    refreshConversations();
  },
  error(frame) {
    showError(frame.code === "busy" ? strings.busy : frame.message || frame.code);
    if (frame.code !== "unknown_approval" && frame.code !== "invalid_approval") {
      transcript.rejectLastEcho();
    }
  },
};

const connection = new Connection(config.socketPath, {
  onFrame(frame) {
    const handler = handlers[frame.type];
    if (handler) handler(frame);
  },
  onState(state) {
    ui.status.dataset.state = state;
    ui.status.textContent = strings[state];
    if (state === "connected") hideError();
    updateComposer();
  },
  onRefused() {
    showError(strings.denied);
  },
});

/* ---------- user actions ---------- */

function submitMessage(event) {
  event.preventDefault();
  const text = ui.input.value.trim();
  if (!text) return;
  if (activeRun !== null) {
    showError(strings.busy);
    return;
  }
  if (!connection.send({ type: "user_message", text: text })) return;
  hideError();
  transcript.addPendingEcho(text);
  ui.input.value = "";
  ui.input.focus();
}

function onKeyDown(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ui.form.requestSubmit();
  }
}

function decide(callId, approve) {
  return connection.send({ type: "approval", call_id: callId, approve: approve });
}

function stopRun() {
  if (connection.send({ type: "cancel" })) ui.stop.disabled = true;
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

async function clearConversation() {
  if (!window.confirm(strings.confirmClear)) return;
  try {
    const response = await fetch(config.clearUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      showError(data.error || strings.clearFailed);
      return;
    }
  } catch (error) {
    showError(strings.clearFailed);
    return;
  }
  transcript.reset();
  hideError();
  transcript.showEmptyHint();
  ui.input.focus();
}

async function refreshConversations() {
  try {
    const response = await fetch(config.listUrl, { credentials: "same-origin" });
    if (response.ok) renderConversations((await response.json()).conversations || []);
  } catch (error) {
    /* the sidebar refreshes again after the next run */
  }
}

function renderConversations(conversations) {
  const items = conversations.map((conversation) => {
    const li = element("li");
    const link = element("a", null, conversation.title || strings.untitled);
    link.href = conversation.url;
    if (conversation.id === config.sessionId) {
      link.setAttribute("aria-current", "page");
      ui.title.textContent = link.textContent;
      document.title = link.textContent + " · " + document.title.split(" · ").pop();
    }
    li.appendChild(link);
    return li;
  });
  if (!items.length) items.push(element("li", "empty", strings.empty));
  ui.list.replaceChildren(...items);
}

function toggleSidebar() {
  const open = ui.toggle.getAttribute("aria-expanded") !== "true";
  ui.toggle.setAttribute("aria-expanded", String(open));
  body.classList.toggle("sidebar-open", open);
}

ui.form.addEventListener("submit", submitMessage);
ui.input.addEventListener("keydown", onKeyDown);
ui.stop.addEventListener("click", stopRun);
ui.clear.addEventListener("click", clearConversation);
ui.toggle.addEventListener("click", toggleSidebar);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && body.classList.contains("sidebar-open")) {
    toggleSidebar();
    ui.toggle.focus();
  }
});
window.addEventListener("online", () => connection.connect());
updateComposer();
connection.connect();
ui.input.focus();
