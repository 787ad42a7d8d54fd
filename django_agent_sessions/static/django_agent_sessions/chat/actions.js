/*
 * The conversation's buttons that POST to the chat's JSON API (django_agent_sessions.urls)
 * with Django's CSRF token: clear, rename, delete, and taking the last turn back (edit and
 * regenerate). A failure shows on the page's error banner.
 */
import { post } from "./http.js";

export class ConversationActions {
  constructor(config, strings, feedback, onCleared) {
    this.config = config;
    this.strings = strings;
    this.feedback = feedback;
    this.onCleared = onCleared; // the transcript is emptied
  }

  post(url, fields) {
    return post(url, fields, {
      failed: (message) => this.feedback.showError(message || this.strings.actionFailed),
      succeeded: () => this.feedback.hideError(),
    });
  }

  async clear() {
    if (!window.confirm(this.strings.confirmClear)) return;
    if (await this.post(this.config.clearUrl)) this.onCleared();
  }

  /* The title as stored, or null. */
  async rename(title) {
    const data = await this.post(this.config.renameUrl, { title: title });
    return data ? data.title : null;
  }

  async remove() {
    if (!window.confirm(this.strings.confirmDelete)) return;
    const data = await this.post(this.config.deleteUrl);
    if (data) window.location.assign(data.next);
  }

  /* Take the last turn back: {text, removed}, or null. */
  takeBack() {
    return this.post(this.config.rewindUrl);
  }
}
