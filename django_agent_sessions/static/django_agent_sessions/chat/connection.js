/*
 * A websocket that reconnects after a dropped connection, with exponential backoff and
 * jitter (so that a restarted server is not hit by every browser at the same instant).
 * Close codes 4401 (not signed in) and 4403 (not your conversation) are final; 4012 and
 * 1012 (the server restarts: another one takes over) reconnect at once. A page that
 * reconnects during a run says where it was (?resume=<run_id>:<seq>), and the server
 * sends just the events it missed (docs/wire-protocol.md, "Resuming").
 */

const MAX_BACKOFF_MS = 15000;
const FINAL_CLOSE_CODES = [4401, 4403];
const RESTART_CLOSE_CODES = [4012, 1012];
const RESTART_SPREAD_MS = 250;
const RUN_ENDS = ["run.completed", "run.cancelled", "run.failed"];

export class Connection {
  constructor(path, callbacks) {
    this.path = path;
    this.callbacks = callbacks; // {onFrame, onState(state), onRefused}
    this.socket = null;
    this.attempts = 0;
    this.timer = null;
    this.refused = false;
    this.position = null; // "<run_id>:<seq>" of the last event of a run in progress
  }

  get isOpen() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  url() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    const resume = this.position ? "?resume=" + encodeURIComponent(this.position) : "";
    return scheme + window.location.host + this.path + resume;
  }

  connect() {
    window.clearTimeout(this.timer);
    this.timer = null;
    if (this.refused || this.socket) return;
    this.callbacks.onState(this.attempts ? "reconnecting" : "connecting");
    const socket = new WebSocket(this.url());
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.attempts = 0;
      this.callbacks.onState("connected");
    });
    socket.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      if (!frame || typeof frame.type !== "string") return;
      this.track(frame);
      this.callbacks.onFrame(frame);
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (FINAL_CLOSE_CODES.includes(event.code)) {
        this.refused = true;
        this.callbacks.onState("offline");
        this.callbacks.onRefused(event.code);
        return;
      }
      if (RESTART_CLOSE_CODES.includes(event.code)) this.attempts = 0;
      this.scheduleReconnect(RESTART_CLOSE_CODES.includes(event.code));
    });
  }

  track(frame) {
    if (frame.type === "history") {
      const active = frame.active_run;
      this.position = active && Number.isInteger(active.seq) ? active.run_id + ":" + active.seq : null;
    } else if (RUN_ENDS.includes(frame.type)) {
      this.position = null;
    } else if (typeof frame.run_id === "string" && Number.isInteger(frame.seq)) {
      this.position = frame.run_id + ":" + frame.seq;
    }
  }

  scheduleReconnect(restarting = false) {
    const base = Math.min(MAX_BACKOFF_MS, 500 * Math.pow(2, this.attempts));
    // A restart: another server is there now; spread the tabs over a moment only.
    const delay = restarting
      ? Math.random() * RESTART_SPREAD_MS
      : base / 2 + Math.random() * (base / 2);
    this.attempts += 1;
    this.callbacks.onState("reconnecting");
    this.timer = window.setTimeout(() => this.connect(), delay);
  }

  send(frame) {
    if (!this.isOpen) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }
}
