/*
 * Older items: the history frame holds the newest HISTORY_LIMIT items; the rest are asked
 * for with load_older (docs/wire-protocol.md) as the user scrolls up, or presses the button
 * above the items (so keyboard and screen reader users can page too). The view stays
 * where it was while a page is inserted above it.
 */
import { element } from "./dom.js";

const LOAD_MARGIN_PX = 300; // this close to the top, the next page is asked for

export class OlderItems {
  constructor(container, transcript, send, strings) {
    this.container = container;
    this.transcript = transcript;
    this.send = send; // (frame) => whether the socket took it
    this.strings = strings;
    this.hasMore = false;
    this.oldestId = null;
    this.asked = null; // the `before` of the page asked for and not yet received
    this.control = null;
    container.addEventListener("scroll", () => this.loadIfVisible(), { passive: true });
  }

  /* After a history frame (or a clear): what is older than the items shown. */
  reset(frame) {
    this.hasMore = Boolean(frame.has_more) && frame.oldest_id !== null;
    this.oldestId = frame.oldest_id;
    this.asked = null;
    if (this.control) this.control.remove();
    this.control = element("button", "load-older", this.strings.loadOlder);
    this.control.type = "button";
    this.control.hidden = !this.hasMore;
    this.control.addEventListener("click", () => this.load());
    this.container.prepend(this.control);
  }

  load() {
    if (!this.hasMore || this.asked !== null) return;
    if (!this.send({ type: "load_older", before: this.oldestId })) return;
    this.asked = this.oldestId;
    this.control.disabled = true;
    this.control.textContent = this.strings.loadingOlder;
  }

  loadIfVisible() {
    if (this.container.scrollTop < LOAD_MARGIN_PX) this.load();
  }

  /* A history.page. */
  received(frame) {
    if (frame.before !== this.asked) return; // an answer to a socket that was replaced
    this.asked = null;
    this.transcript.prepend(frame.items || [], this.control);
    this.hasMore = Boolean(frame.has_more) && frame.oldest_id !== null;
    this.oldestId = frame.oldest_id;
    this.control.disabled = false;
    this.control.textContent = this.strings.loadOlder;
    this.control.hidden = !this.hasMore;
    if (this.hasMore) this.loadIfVisible(); // a short page that fills no screen
  }
}
