/*
 * The packaged chat page: one connection per open conversation (a websocket, or an
 * event stream with POSTs: AGENT_SESSIONS["TRANSPORT"]), speaking the wire protocol
 * of django-agent-sessions (docs/wire-protocol.md), plus the sidebar, the composer and the
 * conversation buttons (rename, clear, delete, edit, regenerate), which use the small
 * JSON API of django_agent_sessions.urls with Django's CSRF token.
 *
 * Plain ES modules served as static files, no build step, no inline script or style, so a
 * strict Content-Security-Policy works.
 */
import { ConversationActions } from "./actions.js";
import { Attachments } from "./attachments.js";
import { branchFrom, takeDraft } from "./branches.js";
import { Budget } from "./budget.js";
import { Composer } from "./composer.js";
import { Connection } from "./connection.js";
import { Feedback } from "./feedback.js";
import { Heading } from "./heading.js";
import { MessageFiles } from "./files.js";
import { OlderItems } from "./older.js";
import { pageElements } from "./page.js";
import { QueuedMessages } from "./queue.js";
import { Ratings } from "./ratings.js";
import { Sidebar } from "./sidebar.js";
import { SseConnection } from "./stream.js";
import { Transcript } from "./transcript.js";

const body = document.body;
const config = body.dataset;
const strings = document.getElementById("chat-strings").dataset;
const $ = (id) => document.getElementById(id);
const ui = pageElements();
const emptyText = $("empty-transcript-text").textContent.trim();
const feedback = new Feedback(ui.error, ui.announcer);
const budget = new Budget($("budget"), strings);
const queue = new QueuedMessages(ui.queued, strings, (frame) => connection.send(frame), feedback, ui.input);
const files = new MessageFiles(config.fileUrl, strings);
const transcript = new Transcript(ui.transcript, strings, new Ratings(config, strings, feedback), files);
const older = new OlderItems(ui.transcript, transcript, (frame) => connection.send(frame), strings);
const actions = new ConversationActions(config, strings, feedback, () => {
  transcript.reset();
  older.reset({ has_more: false, oldest_id: null });
  transcript.showEmptyHint(emptyText);
  ui.input.focus();
});
const heading = new Heading(ui, (title) => actions.rename(title), () => sidebar.refresh());
const sidebar = new Sidebar(ui.list, ui.toggle, config, strings, (title) => {
  // The open conversation, as listed: stored, and titled.
  heading.showListed(title);
  markSaved();
});
let activeRun = null; // the run_id of the conversation's running run, if any
// A message sent during a reply stops it ("interrupt"), joins it ("steer") or waits its turn
// ("queue"): Send stays offered.
const interrupts = ["interrupt", "steer", "queue"].includes(config.whileRunning);
const queues = config.whileRunning === "queue";

/* ---------- feedback ---------- */

const showError = (message) => feedback.showError(message);
const hideError = () => feedback.hideError();
const announce = (text) => feedback.announce(text);

function setBusy(runId) {
  // Hiding the focused Stop button would drop focus to <body>: keep it in the composer.
  const focusWasOnStop = document.activeElement === ui.stop;
  activeRun = runId;
  const busy = runId !== null;
  ui.stop.hidden = !busy;
  ui.stop.disabled = false;
  ui.send.hidden = busy && !interrupts;
  ui.clear.disabled = busy;
  ui.remove.disabled = busy;
  updateComposer();
  transcript.refreshActions(!busy);
  if (!busy && (focusWasOnStop || document.activeElement === document.body)) ui.input.focus();
}

function updateComposer() {
  ui.send.disabled = !connection.isOpen || (activeRun !== null && !interrupts) || composer.rewinding;
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
    // An SSE stream that ended and came back (every SSE_STREAM_SECONDS) with nothing new:
    // what the reader was doing stays (a rating being written, older messages, the focus).
    if (!frame.active_run && transcript.showsNewest(frame)) return performance.mark("das:history-kept");
    transcript.reset();
    older.reset(frame);
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
    pending.forEach((request) => transcript.approvals.show(request, decide));
    setBusy(active ? active.run_id : pending.length ? pending[0].run_id : null);
    queue.show(frame.queued || []);
    transcript.showEmptyHint(emptyText);
    transcript.scrollToEnd();
    performance.mark("das:history-shown"); // when the conversation first showed
    older.loadIfVisible();
  },
  "history.page": (frame) => older.received(frame),
  "conversation.title": (frame) => sidebar.titled(frame.title),
  "conversation.queue": (frame) => queue.received(frame),
  "approval.requested"(frame) {
    transcript.finishReply();
    setBusy(frame.run_id);
    transcript.approvals.show(frame, decide);
    announce(strings.approvalNeeded + ": " + frame.name);
    // The run waits, perhaps in a conversation its first message just created.
    sidebar.refresh();
  },
  "approval.resolved": (frame) => transcript.approvals.resolve(frame.call_id, frame.approve, frame.reason),
  "steer.accepted": () => announce(strings.steered), // it shows once the reply takes it
  "run.started"(frame) {
    hideError();
    setBusy(frame.run_id);
  },
  "text.delta"(frame) {
    if (activeRun === null) setBusy(frame.run_id);
    sidebar.listOnce(frame.run_id);
    transcript.appendDelta(frame.run_id, frame.delta);
  },
  "item.completed"(frame) {
    const item = frame.item || {};
    if (item.kind === "message" && item.role === "user") {
      if (!transcript.confirmEcho(item.text, item.steered)) transcript.render(item);
      markSaved();
    } else if (item.kind === "message" && transcript.isStreaming(frame.run_id)) {
      transcript.finishReply(item);
    } else {
      transcript.finishReply();
      transcript.render(item);
    }
    if (!(item.kind === "message" && item.role === "user")) sidebar.listOnce(frame.run_id);
  },
  "run.completed"(frame) {
    transcript.finishReply();
    transcript.ratings.attachLast(ui.transcript, frame.reply_item_id);
    budget.refresh();
    setBusy(null);
    announce(strings.replied);
    sidebar.refresh();
  },
  "run.cancelled"() {
    // A half-written reply is not in the history: say that it stopped.
    if (!transcript.finishReply(null, "cancelled", strings.stopped)) transcript.note(strings.stopped);
    setBusy(null);
    announce(strings.stopped);
    sidebar.refresh();
    budget.refresh(); // a stopped run spent what its finished model calls did
  },
  "run.failed"(frame) {
    const error = frame.error || {};
    const text = error.message || strings.failed;
    if (!transcript.finishReply(null, "failed", text)) {
      transcript.note(text, "run-error").dataset.status = "failed";
    }
    setBusy(null);
    showError(text);
    sidebar.refresh();
    budget.refresh();
  },
  error(frame) {
    showError(frame.code === "busy" ? strings.busy : frame.message || strings.actionFailed);
    if (frame.code === "quota_exceeded") budget.refresh();
    // Over SSE, `for` names the request that failed: only a message takes its echo back.
    if (frame.for === "cancel") ui.stop.disabled = false;
    const echoed = !frame.for || frame.for === "user_message";
    if (echoed && !["unknown_approval", "invalid_approval", "unknown_queued"].includes(frame.code)) {
      transcript.rejectLastEcho();
    }
  },
};

const callbacks = {
  onFrame(frame) {
    const handler = handlers[frame.type];
    if (handler) handler(frame);
    // A run's end names the message it answered, now stored: "Branch from here" on it.
    if (frame.user_item_id) transcript.storedLastMessage(frame.user_item_id);
    // Sent during a reply that ended before taking them: sent now, as the next message.
    (frame.unsteered || []).forEach((sent) => transcript.takeEcho(sent.text) && sendText(sent.text, []));
  },
  onState(state) {
    ui.status.dataset.state = state;
    ui.status.textContent = strings[state];
    if (state === "connected") hideError();
    updateComposer();
  },
  onRefused: () => showError(strings.denied),
};
const connection =
  config.transport === "sse"
    ? new SseConnection(config, callbacks)
    : new Connection(config.socketPath, callbacks);

/* Regenerate: take the last turn back, then send its message (and files) again. */
async function regenerate() {
  if (activeRun !== null) return;
  const last = transcript.lastUserMessage();
  const data = await composer.takeBack();
  if (!data) return;
  transcript.dropLastTurn();
  sendText(data.text, (last && last.files) || []);
}

/* ---------- the composer ---------- */

/* Send a message: its text and files (as the wire shows them: {id, name, ...}); temporary? */
function sendText(text, sentFiles) {
  const frame = { type: "user_message", text: text, ...("temporary" in config && { temporary: true }) };
  if (sentFiles.length) frame.files = sentFiles.map((file) => file.id);
  if (!connection.send(frame)) return false;
  hideError();
  if (queues && activeRun !== null) {
    announce(strings.queued); // listed under the reply (conversation.queue), not echoed
    return true;
  }
  transcript.addPendingEcho(text, sentFiles);
  transcript.refreshActions(false);
  return true;
}

const composer = new Composer(ui, {
  isBusy: () => activeRun !== null && !interrupts,
  isOpen: () => connection.isOpen,
  onBusy: () => showError(strings.busy),
  send: sendText,
  takeBack: () => actions.takeBack(),
  onUploading: () => showError(strings.stillUploading),
  dropLastTurn: () => transcript.dropLastTurn(),
  changed: () => updateComposer(),
}, new Attachments(
  { button: $("attach-button"), picker: $("attach-input"), list: $("attachment-list"), dropZone: ui.form, input: ui.input },
  config, strings, feedback, () => updateComposer(),
));

function decide(callId, approve) {
  return connection.send({ type: "approval", call_id: callId, approve: approve });
}

function stopRun() {
  if (connection.send({ type: "cancel" })) ui.stop.disabled = true;
}

/* ---------- wiring ---------- */

ui.stop.addEventListener("click", stopRun);
ui.clear.addEventListener("click", () => actions.clear());
ui.remove.addEventListener("click", () => actions.remove());
ui.transcript.addEventListener("transcript:regenerate", () => regenerate());
ui.transcript.addEventListener("transcript:branch", (event) => {
  branchFrom(actions, config.branchUrl, event.detail.article);
});
ui.transcript.addEventListener("transcript:edit", (event) => {
  composer.startEdit(event.detail.article.copyText, event.detail.article.files);
});
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (heading.isRenaming) {
    heading.end();
  } else if (activeRun !== null) {
    event.preventDefault();
    stopRun();
  } else if (composer.editing) {
    composer.cancelEdit();
  } else if (sidebar.isOpen) {
    sidebar.toggleOpen();
    ui.toggle.focus();
  }
});
window.addEventListener("online", () => connection.connect());
updateComposer();
connection.connect();
const draft = takeDraft(config.sessionId);
if (draft !== null) composer.startDraft(draft);
ui.input.focus();
