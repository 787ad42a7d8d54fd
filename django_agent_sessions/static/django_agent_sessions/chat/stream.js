/*
 * The chat's runs over plain HTTP, with the websocket Connection's interface (connect,
 * isOpen, send): the server's frames arrive on an EventSource (one event per frame, named
 * by its type; the browser reconnects by itself and sends Last-Event-ID), and the
 * client's frames are POSTs (JSON, Django's CSRF token). A refused POST answers with the
 * websocket's error frame, handed to onFrame like any other frame.
 */
import { csrfToken } from "./http.js";

// The frame types the server sends (docs/wire-protocol.md).
export const SERVER_FRAME_TYPES = [
  "history",
  "history.page",
  "resumed",
  "run.started",
  "text.delta",
  "item.completed",
  "run.completed",
  "run.cancelled",
  "run.failed",
  "conversation.title",
  "conversation.queue",
  "approval.requested",
  "approval.resolved",
  "error",
  "steer.accepted", // (the POST's answer: never an event of the stream itself)
];
const FINAL_STATUSES = [401, 403];
const MAX_BACKOFF_MS = 15000;

export class SseConnection {
  constructor(urls, callbacks) {
    // The page's data-*-url attributes: eventsUrl, messagesUrl, cancelUrl, olderUrl,
    // approvalUrl (with CALL_ID where the call's id goes) and queueUrl (0 for the id).
    this.urls = urls;
    this.callbacks = callbacks; // {onFrame, onState(state), onRefused}
    this.source = null;
    this.open = false;
    this.refused = false;
    this.attempts = 0;
  }

  get isOpen() {
    return this.open;
  }

  connect() {
    if (this.refused || this.source) return;
    this.callbacks.onState(this.attempts ? "reconnecting" : "connecting");
    const source = new EventSource(this.urls.eventsUrl, { withCredentials: true });
    this.source = source;
    source.addEventListener("error", () => this.lost(source));
    for (const type of SERVER_FRAME_TYPES) {
      source.addEventListener(type, (event) => this.receive(event.data));
    }
  }

  lost(source) {
    this.open = false;
    if (source.readyState !== EventSource.CLOSED) {
      this.callbacks.onState("reconnecting"); // the browser reconnects by itself
      return;
    }
    // Not reconnecting by itself: the server refused the stream or is gone.
    this.source = null;
    this.checkRefused();
  }

  async checkRefused() {
    const probe = this.urls.olderUrl + "?before=1";
    const response = await fetch(probe, { credentials: "same-origin", redirect: "manual" })
      .catch(() => null);
    // A redirect is a login page (LoginRequiredMiddleware and the like): signed out.
    if (response && response.type === "opaqueredirect") return this.refuse(401);
    if (response && FINAL_STATUSES.includes(response.status)) return this.refuse(response.status);
    const base = Math.min(MAX_BACKOFF_MS, 1000 * Math.pow(2, this.attempts));
    this.attempts += 1;
    this.callbacks.onState("reconnecting");
    window.setTimeout(() => this.connect(), base / 2 + Math.random() * (base / 2));
  }

  refuse(status) {
    this.refused = true;
    this.open = false;
    if (this.source) this.source.close();
    this.callbacks.onState("offline");
    this.callbacks.onRefused(status === 401 ? 4401 : 4403);
  }

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch (error) {
      return;
    }
    if (!frame || typeof frame.type !== "string") return;
    if (!this.open && (frame.type === "history" || frame.type === "resumed")) {
      // Open once the server follows the conversation: a message sent earlier could
      // create it before this stream listens for its creation.
      this.open = true;
      this.attempts = 0;
      this.callbacks.onState("connected");
    }
    this.callbacks.onFrame(frame);
  }

  send(frame) {
    if (!this.open) return false;
    const { type, ...fields } = frame;
    if (type === "load_older") {
      this.fetchFrame(type, this.urls.olderUrl + "?before=" + encodeURIComponent(fields.before));
    } else if (type === "user_message") {
      this.postFrame(type, this.urls.messagesUrl, fields);
    } else if (type === "cancel") {
      this.postFrame(type, this.urls.cancelUrl, fields);
    } else if (type === "queue_edit" || type === "queue_remove") {
      // queueUrl ends in /0/, the place of the queued message's id.
      const url = this.urls.queueUrl.replace(/\/0\/$/, "/" + encodeURIComponent(fields.id) + "/");
      const body = type === "queue_edit" ? { text: fields.text } : {};
      this.postFrame(type, type === "queue_edit" ? url : url + "remove/", body);
    } else if (type === "approval") {
      const { call_id: callId, ...decision } = fields;
      const url = this.urls.approvalUrl.replace("CALL_ID", encodeURIComponent(callId));
      this.postFrame(type, url, decision);
    } else {
      return false;
    }
    return true;
  }

  async postFrame(type, url, fields) {
    return this.fetchFrame(type, url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(fields),
    });
  }

  /* A request whose answer, when it is a frame (an error, a page), is handed on; an
   * error names the request it answers (`for`), which the websocket's never need. */
  async fetchFrame(type, url, options = {}) {
    let response;
    try {
      response = await fetch(url, { credentials: "same-origin", ...options });
    } catch (error) {
      this.callbacks.onFrame({ type: "error", code: "unavailable", message: "", for: type });
      return;
    }
    if (FINAL_STATUSES.includes(response.status)) return this.refuse(response.status);
    const data = await response.json().catch(() => null);
    if (data && data.type === "error") {
      this.callbacks.onFrame({ ...data, for: type });
    } else if (data && typeof data.type === "string") {
      this.callbacks.onFrame(data);
    } else if (!response.ok) {
      this.callbacks.onFrame({ type: "error", code: "unavailable", message: "", for: type });
    }
  }
}
