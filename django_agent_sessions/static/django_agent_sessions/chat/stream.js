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
  "run.started",
  "text.delta",
  "item.completed",
  "run.completed",
  "run.cancelled",
  "run.failed",
  "approval.requested",
  "approval.resolved",
  "error",
];
const FINAL_STATUSES = [401, 403];

export class SseConnection {
  constructor(urls, callbacks) {
    // The page's data-*-url attributes: eventsUrl, messagesUrl, cancelUrl, olderUrl and
    // approvalUrl (with CALL_ID where the call's id goes).
    this.urls = urls;
    this.callbacks = callbacks; // {onFrame, onState(state), onRefused}
    this.source = null;
    this.open = false;
    this.refused = false;
  }

  get isOpen() {
    return this.open;
  }

  connect() {
    if (this.refused || this.source) return;
    this.callbacks.onState("connecting");
    const source = new EventSource(this.urls.eventsUrl, { withCredentials: true });
    this.source = source;
    source.addEventListener("open", () => {
      this.open = true;
      this.callbacks.onState("connected");
    });
    source.addEventListener("error", () => this.lost(source));
    for (const type of SERVER_FRAME_TYPES) {
      source.addEventListener(type, (event) => this.receive(event.data));
    }
  }

  lost(source) {
    this.open = false;
    if (source.readyState === EventSource.CLOSED) {
      // Not reconnecting by itself: the server refused the stream (401, 403) or is gone.
      this.source = null;
      this.checkRefused();
      return;
    }
    this.callbacks.onState("reconnecting");
  }

  async checkRefused() {
    const response = await fetch(this.urls.olderUrl + "?before=1", { credentials: "same-origin" })
      .catch(() => null);
    if (response && FINAL_STATUSES.includes(response.status)) {
      this.refused = true;
      this.callbacks.onState("offline");
      this.callbacks.onRefused(response.status === 401 ? 4401 : 4403);
      return;
    }
    this.callbacks.onState("reconnecting");
    window.setTimeout(() => this.connect(), 1000 + Math.random() * 1000);
  }

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch (error) {
      return;
    }
    if (frame && typeof frame.type === "string") this.callbacks.onFrame(frame);
  }

  send(frame) {
    if (!this.open) return false;
    const { type, ...fields } = frame;
    if (type === "load_older") {
      this.fetchFrame(this.urls.olderUrl + "?before=" + encodeURIComponent(fields.before));
    } else if (type === "user_message") {
      this.postFrame(this.urls.messagesUrl, fields);
    } else if (type === "cancel") {
      this.postFrame(this.urls.cancelUrl, fields);
    } else if (type === "approval") {
      const { call_id: callId, ...decision } = fields;
      this.postFrame(this.urls.approvalUrl.replace("CALL_ID", encodeURIComponent(callId)), decision);
    } else {
      return false;
    }
    return true;
  }

  async postFrame(url, fields) {
    return this.fetchFrame(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(fields),
    });
  }

  /* A request whose answer, when it is a frame (an error, a page), is handed on. */
  async fetchFrame(url, options = {}) {
    let response;
    try {
      response = await fetch(url, { credentials: "same-origin", ...options });
    } catch (error) {
      this.callbacks.onFrame({ type: "error", code: "unavailable", message: "" });
      return;
    }
    const data = await response.json().catch(() => null);
    if (data && typeof data.type === "string") {
      this.callbacks.onFrame(data);
    } else if (!response.ok) {
      this.callbacks.onFrame({ type: "error", code: "unavailable", message: data && data.error });
    }
  }
}
