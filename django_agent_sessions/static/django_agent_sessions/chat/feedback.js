/*
 * What the page tells the user besides the transcript: the error banner, and one-off
 * announcements for screen readers (the outcome of a run, an approval request).
 */

export class Feedback {
  constructor(banner, announcer) {
    this.banner = banner;
    this.announcer = announcer;
  }

  showError(message) {
    this.banner.textContent = message;
    this.banner.hidden = false;
  }

  hideError() {
    this.banner.hidden = true;
    this.banner.textContent = "";
  }

  announce(text) {
    // Emptied first, so that the same text twice is still heard twice.
    this.announcer.textContent = "";
    window.setTimeout(() => {
      this.announcer.textContent = text;
    }, 50);
  }
}
