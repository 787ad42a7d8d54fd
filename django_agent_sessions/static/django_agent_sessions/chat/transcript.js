/*
 * The transcript: renders display items (docs/wire-protocol.md) and the reply being written.
 *
 * What a user, a tool or the model wrote is inserted with textContent. The one exception
 * is an assistant message's `html` field: Markdown rendered on the server by
 * django_agent_sessions.rendering (raw HTML disabled, then sanitized by nh3), so it holds
 * no script, no event handler and no javascript: link. While a reply streams, its text is
 * shown as plain text; the rendered HTML replaces it when the message completes.
 *
 * Every rendered item carries data-kind (and messages data-role); a stopped or failed
 * reply carries data-status. Themes and tests rely on these attributes.
 */
import { Approvals } from "./approvals.js";
import { element, prettyJson, shorten, timestamp } from "./dom.js";
import { MessageActions } from "./message_actions.js";

const USER_MESSAGES = '[data-kind="message"][data-role="user"]';

/* A message that joined a running reply (WHILE_RUNNING = "steer"): not the one a run's
 * end names as answered (storedLastMessage). */
function markSteered(article) {
  article.dataset.steered = "";
  return article;
}

export class Transcript {
  constructor(container, strings, ratings, files) {
    this.container = container;
    this.strings = strings;
    this.ratings = ratings; // thumbs up and down on stored replies (ratings.js)
    this.files = files; // a user message's files (files.js)
    this.buttons = new MessageActions(container, strings); // the buttons under a message
    this.streaming = null; // {runId, article, textElement} of the reply being written
    this.pendingEcho = []; // our own messages, shown before the server confirmed them
    this.idle = true;
    this.toolNames = new Map(); // call_id -> tool name, to label outputs
    this.sink = null; // while older items are prepended: the fragment they go into
    this.approvals = new Approvals(container, strings, (node) => this.append(node));
  }

  reset() {
    this.container.replaceChildren();
    this.streaming = null;
    this.pendingEcho = [];
    this.toolNames.clear();
  }

  /* A history frame with nothing new: its newest item is the newest shown, nothing pending. */
  showsNewest(frame) {
    const newest = (frame.items || []).at(-1);
    const waiting = (frame.pending_approvals || []).length + (frame.queued || []).length;
    if (!newest?.id || waiting || this.streaming || this.pendingEcho.length) return false;
    return [...this.container.querySelectorAll("[data-item-id]")].at(-1)?.dataset.itemId === String(newest.id);
  }

  nearEnd(margin) {
    const box = this.container;
    return box.scrollHeight - box.scrollTop - box.clientHeight < margin;
  }

  scrollToEnd() {
    this.container.scrollTop = this.container.scrollHeight;
  }

  append(node) {
    if (this.sink) return this.sink.appendChild(node);
    const hint = this.container.querySelector(".empty-hint");
    if (hint) hint.remove();
    const follow = this.nearEnd(80);
    this.container.appendChild(node);
    if (follow) this.scrollToEnd();
    return node;
  }

  /* Older items (a history.page) above those shown, the view staying where it was. */
  prepend(items, before) {
    this.sink = document.createDocumentFragment();
    try {
      items.forEach((item) => this.render(item));
    } finally {
      const older = this.sink;
      this.sink = null;
      const box = this.container;
      const fromBottom = box.scrollHeight - box.scrollTop;
      box.insertBefore(older, before ? before.nextSibling : box.firstChild);
      box.scrollTop = box.scrollHeight - fromBottom;
    }
  }

  /* ---------- messages ---------- */

  message(role, text, html, createdAt) {
    const isUser = role === "user";
    const article = element("article", "message message-" + (isUser ? "user" : "assistant"));
    article.dataset.kind = "message";
    article.dataset.role = isUser ? "user" : "assistant";
    const header = element("header", "message-header");
    header.appendChild(element("h2", "speaker", isUser ? this.strings.you : this.strings.assistant));
    header.appendChild(timestamp(createdAt));
    article.appendChild(header);
    const textElement = element("div", "text");
    article.appendChild(textElement);
    this.setContent(article, textElement, text, html);
    article.appendChild(this.buttons.bar(article, isUser));
    return { article: article, textElement: textElement };
  }

  setContent(article, textElement, text, html) {
    article.copyText = text || "";
    if (typeof html === "string" && html) {
      // Sanitized on the server (rendering.py); see the comment at the top.
      textElement.innerHTML = html;
      textElement.classList.add("markdown");
      this.buttons.addCodeCopyButtons(textElement);
    } else {
      textElement.textContent = text || "";
      textElement.classList.remove("markdown");
    }
  }

  /* ---------- other items ---------- */

  collapsible(kind, className, summaryText, contentText) {
    const details = element("details", "entry " + className);
    details.dataset.kind = kind;
    details.appendChild(element("summary", null, summaryText));
    details.appendChild(element("pre", "payload", contentText));
    return this.append(details);
  }

  render(item) {
    const strings = this.strings;
    switch (item.kind) {
      case "message": {
        const shown = this.message(item.role, item.text, item.html, item.created_at);
        if (item.id && !item.status) shown.article.id = "item-" + item.id; // search.js opens it
        this.files.show(shown.article, item.files);
        if (item.role === "user" && !item.status) this.buttons.stored(shown.article, item.id);
        if (item.steered) markSteered(shown.article);
        if (item.status) {
          // A run note: the reply a stopped or failed run had streamed (not saved).
          shown.article.dataset.status = item.status;
          const noteText = item.status === "failed" ? strings.failed + "." : strings.stopped;
          shown.article.appendChild(element("p", "note", noteText));
        }
        this.ratings.attach(shown.article, item);
        return this.append(shown.article);
      }
      case "tool_call":
        if (item.call_id) this.toolNames.set(item.call_id, item.name);
        return this.collapsible("tool_call", "tool-call", strings.toolCall + ": " + item.name,
          prettyJson(item.arguments));
      case "tool_output": {
        const name = item.name || this.toolNames.get(item.call_id);
        const label = strings.toolOutput + (name ? " (" + name + ")" : "") + ": " + shorten(item.output, 60);
        return this.collapsible("tool_output", "tool-output", label, item.output);
      }
      case "reasoning":
        return item.text ? this.collapsible("reasoning", "reasoning", strings.reasoning, item.text) : null;
      case "handoff": {
        if (!item.target) return null;
        const node = this.note(strings.handoff + " " + item.target, "handoff");
        node.dataset.kind = "handoff";
        return node;
      }
      default:
        return null; // kinds a chat page need not show
    }
  }

  note(text, className) {
    return this.append(element("p", "entry " + (className || "note"), text));
  }

  showEmptyHint(text) {
    if (!this.container.querySelector(".message, .entry")) {
      this.container.appendChild(element("p", "empty-hint", text));
    }
  }

  /* ---------- the assistant message being streamed ---------- */

  streamingReply(runId) {
    if (!this.streaming || this.streaming.runId !== runId) {
      const reply = this.message("assistant", "");
      reply.article.classList.add("is-streaming");
      reply.article.setAttribute("aria-busy", "true");
      this.append(reply.article);
      this.streaming = { runId: runId, article: reply.article, textElement: reply.textElement };
    }
    return this.streaming;
  }

  appendDelta(runId, delta) {
    const follow = this.nearEnd(160);
    const reply = this.streamingReply(runId);
    // Plain text while it streams: cheap, and nothing half-parsed reaches the DOM.
    reply.textElement.textContent += delta;
    reply.article.copyText = reply.textElement.textContent;
    if (follow) this.scrollToEnd();
  }

  isStreaming(runId) {
    return this.streaming !== null && this.streaming.runId === runId;
  }

  finishReply(item, status, noteText) {
    const current = this.streaming;
    if (!current) return false;
    // The completed message is authoritative: it repairs any missed delta.
    if (item) this.setContent(current.article, current.textElement, item.text, item.html);
    current.article.classList.remove("is-streaming");
    current.article.removeAttribute("aria-busy");
    if (status) current.article.dataset.status = status;
    if (noteText) current.article.appendChild(element("p", "note", noteText));
    this.streaming = null;
    return true;
  }

  /* ---------- our own messages, shown at once, confirmed by the server's echo ---------- */

  addPendingEcho(text, files) {
    const echo = this.message("user", text);
    this.files.show(echo.article, files);
    echo.article.classList.add("is-pending");
    this.append(echo.article);
    this.pendingEcho.push({ text: text, article: echo.article });
    this.scrollToEnd();
  }

  /* `steered`: it joined a running reply (WHILE_RUNNING = "steer"), shown where it
   * entered, after what the run did before taking it. */
  confirmEcho(text, steered = false) {
    const index = this.pendingEcho.findIndex((echo) => echo.text === text);
    if (index === -1) return false;
    const article = this.pendingEcho.splice(index, 1)[0].article;
    article.classList.remove("is-pending");
    if (steered) this.append(markSteered(article));
    return true;
  }

  /* A message sent during a reply that ended before taking it: its echo goes, as it is
   * sent again as the next message; false when it is not this page's. */
  takeEcho(text) {
    const index = this.pendingEcho.findIndex((echo) => echo.text === text);
    if (index === -1) return false;
    this.pendingEcho.splice(index, 1)[0].article.remove();
    return true;
  }

  /* After a run's end: the message it answered, sent live, is stored as `itemId` (its
   * item.completed came before it was). It now shows as after a reload: Branch from here. */
  storedLastMessage(itemId) {
    const answered = this.container.querySelectorAll(`${USER_MESSAGES}:not([data-steered])`);
    const last = answered.length ? answered[answered.length - 1] : null; // not one it took
    if (!itemId || !last || last.dataset.itemId || last.dataset.status) return;
    last.id = "item-" + itemId; // search.js opens it
    this.buttons.stored(last, itemId);
  }

  rejectLastEcho() {
    const echo = this.pendingEcho.pop();
    if (echo) {
      echo.article.classList.add("is-rejected");
      echo.article.dataset.status = "failed";
    }
  }

  /* ---------- edit and regenerate: the last turn ---------- */

  lastUserMessage() {
    const users = this.container.querySelectorAll(USER_MESSAGES);
    return users.length ? users[users.length - 1] : null;
  }

  /* Remove the last user message and everything after it (the turn being redone). */
  dropLastTurn() {
    const last = this.lastUserMessage();
    if (!last) return;
    while (last.nextSibling) last.nextSibling.remove();
    last.remove();
  }

  refreshActions(idle) {
    this.idle = idle;
    this.container.querySelectorAll(".action.edit, .action.regenerate").forEach((button) => {
      button.hidden = true;
    });
    if (!idle) return;
    const lastUser = this.lastUserMessage();
    if (!lastUser || lastUser.classList.contains("is-pending")) return;
    lastUser.querySelector(".action.edit").hidden = false;
    const replies = this.container.querySelectorAll('[data-kind="message"][data-role="assistant"]');
    const lastReply = replies.length ? replies[replies.length - 1] : null;
    const target = lastReply || lastUser;
    if (lastReply && lastUser.compareDocumentPosition(lastReply) & Node.DOCUMENT_POSITION_FOLLOWING) {
      target.querySelector(".action.regenerate").hidden = false;
    }
  }
}
