/*
 * The packaged chat page: one websocket per open conversation, speaking the wire protocol
 * of django-agent-sessions (docs/wire-protocol.md), plus the sidebar, the composer and the
 * conversation buttons (rename, clear, delete, edit, regenerate), which use the small
 * JSON API of django_agent_sessions.urls with Django's CSRF token.
 *
 * Plain ES modules served as static files, no build step, no inline script or style, so a
 * strict Content-Security-Policy works.
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
  rename: $("rename-button"),
  remove: $("delete-button"),
  renameForm: $("rename-form"),
  renameInput: $("rename-input"),
  renameCancel: $("rename-cancel"),
  actions: $("conversation-actions"),
  status: $("connection-status"),
  error: $("error-banner"),
  announcer: $("announcer"),
  list: $("conversation-list"),
  title: $("conversation-title"),
  toggle: $("sidebar-toggle"),
  editingNote: $("editing-note"),
  transcript: $("transcript"),
};
const emptyText = $("empty-transcript-text").textContent.trim();
const transcript = new Transcript(ui.transcript, strings);
let activeRun = null; // the run_id of the conversation's running run, if any
let editing = false; // the composer holds an edited version of the last user message
let rewinding = false;

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
  // Screen readers hear the outcome once, besides the log's new messages.
  ui.announcer.textContent = "";
  window.setTimeout(() => {
    ui.announcer.textContent = text;
  }, 50);
}

function setBusy(runId) {
  // Hiding the focused Stop button would drop focus to <body>: keep it in the composer.
  const focusWasOnStop = document.activeElement === ui.stop;
  activeRun = runId;
  const busy = runId !== null;
  ui.stop.hidden = !busy;
  ui.stop.disabled = false;
  ui.send.hidden = busy;
  ui.clear.disabled = busy;
  ui.remove.disabled = busy;
  updateComposer();
  transcript.refreshActions(!busy);
  if (!busy && (focusWasOnStop || document.activeElement === document.body)) ui.input.focus();
}

function updateComposer() {
  ui.send.disabled = !connection.isOpen || activeRun !== null || rewinding;
}

function markSaved() {
  if (config.saved !== undefined) return;
  body.dataset.saved = "";
  ui.rename.hidden = false;
  ui.clear.hidden = false;
  ui.remove.hidden = false;
}

/* ---------- frames from the server ---------- */

const handlers = {
  history(frame) {
    transcript.reset();
    (frame.items || []).forEach((item) => transcript.render(item));
    if ((frame.items || []).length) markSaved();
    // A run in flight: its items so far, then the text of the message being written.
    const active = frame.active_run;
    if (active) {
      (active.items || []).forEach((item) => transcript.render(item));
      if (active.text) transcript.appendDelta(active.run_id, active.text);
    }
    // A run waiting for decisions holds the conversation, like a running one.
    const pending = frame.pending_approvals || [];
    pending.forEach((request) => transcript.approval(request, decide));
    setBusy(active ? active.run_id : pending.length ? pending[0].run_id : null);
    transcript.showEmptyHint(emptyText);
    transcript.scrollToEnd();
  },
  "approval.requested"(frame) {
    transcript.finishReply();
    setBusy(frame.run_id);
    transcript.approval(frame, decide);
    announce(strings.approvalNeeded + ": " + frame.name);
    // The run waits, perhaps in a conversation its first message just created.
    refreshConversations();
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
    listOnce(frame.run_id);
    transcript.appendDelta(frame.run_id, frame.delta);
  },
  "item.completed"(frame) {
    const item = frame.item || {};
    if (item.kind === "message" && item.role === "user") {
      if (!transcript.confirmEcho(item.text)) transcript.render(item);
      markSaved();
    } else if (item.kind === "message" && transcript.isStreaming(frame.run_id)) {
      transcript.finishReply(item);
    } else {
      transcript.finishReply();
      transcript.render(item);
    }
    if (!(item.kind === "message" && item.role === "user")) listOnce(frame.run_id);
  },
  "run.completed"() {
    transcript.finishReply();
    setBusy(null);
    announce(strings.replied);
    refreshConversations();
  },
  "run.cancelled"() {
    // A half-written reply is not in the history: say that it stopped.
    if (!transcript.finishReply(null, "cancelled", strings.stopped)) transcript.note(strings.stopped);
    setBusy(null);
    announce(strings.stopped);
    refreshConversations();
  },
  "run.failed"(frame) {
    const error = frame.error || {};
    const text = error.message || strings.failed;
    if (!transcript.finishReply(null, "failed", text)) {
      transcript.note(text, "run-error").dataset.status = "failed";
    }
    setBusy(null);
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

/* ---------- HTTP actions ---------- */

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const field = document.querySelector("input[name=csrfmiddlewaretoken]");
  return field ? field.value : "";
}

async function post(url, fields) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
      body: fields ? new URLSearchParams(fields) : undefined,
    });
  } catch (error) {
    showError(strings.actionFailed);
    return null;
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    showError(data.error || strings.actionFailed);
    return null;
  }
  hideError();
  return data;
}

async function clearConversation() {
  if (!window.confirm(strings.confirmClear)) return;
  if (!(await post(config.clearUrl))) return;
  transcript.reset();
  transcript.showEmptyHint(emptyText);
  ui.input.focus();
}

async function deleteConversation() {
  if (!window.confirm(strings.confirmDelete)) return;
  const data = await post(config.deleteUrl);
  if (data) window.location.assign(data.next);
}

function startRename() {
  ui.renameInput.value = ui.title.textContent;
  ui.title.hidden = true;
  ui.actions.hidden = true;
  ui.renameForm.hidden = false;
  ui.renameInput.focus();
  ui.renameInput.select();
}

function endRename() {
  ui.renameForm.hidden = true;
  ui.title.hidden = false;
  ui.actions.hidden = false;
  ui.rename.focus();
}

async function submitRename(event) {
  event.preventDefault();
  const data = await post(config.renameUrl, { title: ui.renameInput.value });
  if (!data) return;
  setTitle(data.title);
  endRename();
  refreshConversations();
}

function setTitle(title) {
  ui.title.textContent = title;
  document.title = title + " · " + document.title.split(" · ").pop();
}

/* Edit and regenerate: take the last turn back (pop_item), then send it again. */
async function rewind() {
  rewinding = true;
  updateComposer();
  try {
    return await post(config.rewindUrl);
  } finally {
    rewinding = false;
    updateComposer();
  }
}

async function regenerate() {
  if (activeRun !== null) return;
  const data = await rewind();
  if (!data) return;
  transcript.dropLastTurn();
  sendText(data.text);
}

function startEdit(article) {
  if (activeRun !== null) return;
  editing = true;
  ui.editingNote.hidden = false;
  ui.input.value = article.copyText;
  growComposer();
  ui.input.focus();
}

function cancelEdit() {
  editing = false;
  ui.editingNote.hidden = true;
  ui.input.value = "";
  growComposer();
}

/* ---------- the composer ---------- */

function sendText(text) {
  if (!connection.send({ type: "user_message", text: text })) return false;
  hideError();
  transcript.addPendingEcho(text);
  transcript.refreshActions(false);
  return true;
}

async function submitMessage(event) {
  event.preventDefault();
  const text = ui.input.value.trim();
  if (!text || rewinding) return;
  if (activeRun !== null) {
    showError(strings.busy);
    return;
  }
  if (!connection.isOpen) return;
  if (editing) {
    const data = await rewind();
    if (!data) return;
    transcript.dropLastTurn();
    editing = false;
    ui.editingNote.hidden = true;
  }
  if (!sendText(text)) return;
  ui.input.value = "";
  growComposer();
  ui.input.focus();
}

function growComposer() {
  // Grows with its text up to the CSS max-height, then scrolls.
  ui.input.style.height = "auto";
  ui.input.style.height = ui.input.scrollHeight + 2 + "px";
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

/* ---------- the sidebar ---------- */

let listedRun = null;

function listOnce(runId) {
  // The run's first output comes after the SDK stored the user's message (before the first
  // model call): from then on the conversation is listed, titled by its first message.
  if (listedRun === runId) return;
  listedRun = runId;
  refreshConversations();
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
      if (ui.renameForm.hidden) setTitle(link.textContent);
      markSaved();
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

/* ---------- wiring ---------- */

ui.form.addEventListener("submit", submitMessage);
ui.input.addEventListener("keydown", onKeyDown);
ui.input.addEventListener("input", growComposer);
ui.stop.addEventListener("click", stopRun);
ui.clear.addEventListener("click", clearConversation);
ui.remove.addEventListener("click", deleteConversation);
ui.rename.addEventListener("click", startRename);
ui.renameForm.addEventListener("submit", submitRename);
ui.renameCancel.addEventListener("click", endRename);
ui.toggle.addEventListener("click", toggleSidebar);
ui.transcript.addEventListener("transcript:regenerate", () => regenerate());
ui.transcript.addEventListener("transcript:edit", (event) => startEdit(event.detail.article));
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (!ui.renameForm.hidden) {
    endRename();
  } else if (activeRun !== null) {
    event.preventDefault();
    stopRun();
  } else if (editing) {
    cancelEdit();
  } else if (body.classList.contains("sidebar-open")) {
    toggleSidebar();
    ui.toggle.focus();
  }
});
window.addEventListener("online", () => connection.connect());
updateComposer();
connection.connect();
ui.input.focus();
