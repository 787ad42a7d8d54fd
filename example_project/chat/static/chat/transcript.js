/*
 * The transcript: renders display items (docs/wire-protocol.md) and the reply being written.
 *
 * Everything the model, a tool or a user wrote is inserted with textContent, never as
 * HTML, so a reply cannot inject markup; nothing is rendered as Markdown.
 */

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function shorten(text, length) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > length ? flat.slice(0, length - 1) + "…" : flat;
}

function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (error) {
    return String(text);
  }
}

export class Transcript {
  constructor(container, strings) {
    this.container = container;
    this.strings = strings;
    this.streaming = null; // {runId, article, textElement} of the reply being written
    this.pendingEcho = []; // our own messages, shown before the server confirmed them
  }

  reset() {
    this.container.replaceChildren();
    this.streaming = null;
    this.pendingEcho = [];
  }

  nearEnd(margin) {
    const box = this.container;
    return box.scrollHeight - box.scrollTop - box.clientHeight < margin;
  }

  scrollToEnd() {
    this.container.scrollTop = this.container.scrollHeight;
  }

  append(node) {
    const hint = this.container.querySelector(".empty-hint");
    if (hint) hint.remove();
    const follow = this.nearEnd(80);
    this.container.appendChild(node);
    if (follow) this.scrollToEnd();
    return node;
  }

  message(role, text) {
    const isUser = role === "user";
    const article = element("article", "message message-" + (isUser ? "user" : "assistant"));
    const speaker = isUser ? this.strings.you : this.strings.assistant;
    article.appendChild(element("h2", "speaker", speaker));
    const textElement = element("div", "text", text);
    article.appendChild(textElement);
    return { article: article, textElement: textElement };
  }

  collapsible(className, summaryText, contentText) {
    const details = element("details", "entry " + className);
    details.appendChild(element("summary", null, summaryText));
    details.appendChild(element("pre", "payload", contentText));
    return this.append(details);
  }

  render(item) {
    const strings = this.strings;
    switch (item.kind) {
      case "message": {
        const shown = this.message(item.role, item.text);
        if (item.status) {
          // A run note: the reply a stopped or failed run had streamed (not saved).
          shown.article.dataset.status = item.status;
          const noteText = item.status === "failed" ? strings.failed + "." : strings.stopped;
          shown.article.appendChild(element("p", "note", noteText));
        }
        return this.append(shown.article);
      }
      case "tool_call":
        return this.collapsible("tool-call", strings.toolCall + ": " + item.name, prettyJson(item.arguments));
      case "tool_output":
        return this.collapsible("tool-output", strings.toolOutput + ": " + shorten(item.output, 60), item.output);
      case "reasoning":
        return item.text ? this.collapsible("reasoning", strings.reasoning, item.text) : null;
      case "handoff":
        return item.target ? this.note(strings.handoff + " " + item.target, "handoff") : null;
      default:
        return null; // kinds a chat page need not show
    }
  }

  /* A tool call waiting for the user's decision (approval.requested, pending_approvals). */

  approval(request, onDecide) {
    const strings = this.strings;
    const existing = this.findApproval(request.call_id);
    if (existing) return existing;
    const box = element("section", "entry approval");
    box.dataset.kind = "approval";
    box.dataset.callId = request.call_id;
    box.setAttribute("aria-label", strings.approvalNeeded + ": " + request.name);
    box.appendChild(element("h2", "approval-title", strings.approvalNeeded + ": " + request.name));
    box.appendChild(element("pre", "payload", prettyJson(request.arguments)));
    const actions = element("div", "approval-actions");
    const approve = element("button", "approve-button", strings.approve);
    const reject = element("button", "reject-button", strings.reject);
    for (const [button, decision] of [[approve, true], [reject, false]]) {
      button.type = "button";
      button.addEventListener("click", () => {
        approve.disabled = reject.disabled = true;
        if (!onDecide(request.call_id, decision)) approve.disabled = reject.disabled = false;
      });
      actions.appendChild(button);
    }
    box.appendChild(actions);
    return this.append(box);
  }

  findApproval(callId) {
    return Array.from(this.container.querySelectorAll("[data-kind='approval']")).find(
      (node) => node.dataset.callId === callId
    );
  }

  resolveApproval(callId, approved, reason) {
    const box = this.findApproval(callId);
    if (!box || box.dataset.decision) return;
    const strings = this.strings;
    box.dataset.decision = approved ? "approved" : "rejected";
    const outcome = approved ? strings.approved : reason === "expired" ? strings.expired : strings.rejected;
    const actions = box.querySelector(".approval-actions");
    if (actions) actions.replaceWith(element("p", "approval-outcome", outcome));
  }

  note(text, className) {
    return this.append(element("p", "entry " + (className || "note"), text));
  }

  showEmptyHint() {
    if (!this.container.querySelector(".message, .entry")) {
      this.container.appendChild(element("p", "empty-hint", this.strings.emptyTranscript));
    }
  }

  /* The assistant message being streamed. */

  streamingReply(runId) {
    if (!this.streaming || this.streaming.runId !== runId) {
      const reply = this.message("assistant", "");
      reply.article.classList.add("is-streaming");
      this.append(reply.article);
      this.streaming = { runId: runId, article: reply.article, textElement: reply.textElement };
    }
    return this.streaming;
  }

  appendDelta(runId, delta) {
    const follow = this.nearEnd(160);
    this.streamingReply(runId).textElement.textContent += delta;
    if (follow) this.scrollToEnd();
  }

  isStreaming(runId) {
    return this.streaming !== null && this.streaming.runId === runId;
  }

  finishReply(finalText, noteText) {
    const current = this.streaming;
    if (!current) return false;
    // The completed message's text is authoritative: it repairs any missed delta.
    if (typeof finalText === "string") current.textElement.textContent = finalText;
    current.article.classList.remove("is-streaming");
    if (noteText) current.article.appendChild(element("p", "note", noteText));
    this.streaming = null;
    return true;
  }

  /* Our own messages, shown at once and confirmed by the server's echo. */

  addPendingEcho(text) {
    const echo = this.message("user", text);
    echo.article.classList.add("is-pending");
    this.append(echo.article);
    this.pendingEcho.push({ text: text, article: echo.article });
    this.scrollToEnd();
  }

  confirmEcho(text) {
    const index = this.pendingEcho.findIndex((echo) => echo.text === text);
    if (index === -1) return false;
    this.pendingEcho[index].article.classList.remove("is-pending");
    this.pendingEcho.splice(index, 1);
    return true;
  }

  rejectLastEcho() {
    const echo = this.pendingEcho.pop();
    if (echo) echo.article.classList.add("is-rejected");
  }
}
