/*
 * Ratings of the assistant's replies (docs/feedback.md): a thumb up and a thumb down on
 * every finished reply that is stored (it has an item id), pressed as the signed-in
 * person rated it. The page reads its ratings once (GET c/<id>/feedback/) and keeps them
 * per conversation, so a history frame that redraws the transcript shows them again.
 *
 * A thumb saves the rating at once (POST c/<id>/items/<item>/feedback/, JSON, with
 * Django's CSRF token), then a small form takes an optional comment and tags; Save sends
 * them, Escape or Cancel closes it and puts the focus back on the thumb. There is no
 * "unrated": the other thumb changes the rating, the pressed one opens the form again.
 * Pages without a feedback URL (anonymous visitors) show no thumbs.
 */
import { element } from "./dom.js";
import { csrfToken, getJson } from "./http.js";

// Material Icons' thumb_up (Apache License 2.0); the thumb down is it, turned (chat.css).
const THUMB_PATH =
  "M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 " +
  "7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23" +
  ".14-.47.14-.73v-2z";
const REPLY = '[data-kind="message"][data-role="assistant"]';

function icon() {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", THUMB_PATH);
  svg.appendChild(path);
  return svg;
}

export class Ratings {
  constructor(config, strings, feedback) {
    this.listUrl = config.feedbackUrl || ""; // only on pages of signed-in people
    this.rateUrl = config.rateUrl || ""; // item 0's: the id is put in
    this.strings = strings;
    this.feedback = feedback; // the page's error banner and announcer
    this.tags = JSON.parse(config.feedbackTags || "[]"); // FEEDBACK_TAGS, in their order
    this.saved = new Map(); // item id -> {item_id, rating, comment, tags}
    // Asked once. A conversation not stored when the page opened has no ratings yet (and
    // would answer 404); no feedback URL: no thumbs at all.
    this.loaded = null;
    if (this.listUrl) this.loaded = config.saved === undefined ? Promise.resolve() : this.load();
  }

  async load() {
    const data = await getJson(this.listUrl);
    ((data && data.ratings) || []).forEach((rating) => this.saved.set(rating.item_id, rating));
  }

  /* A rendered item: thumbs on it if it is a stored reply (a run note has no id). */
  attach(article, item) {
    if (!this.loaded || !item.id || item.status || item.role !== "assistant") return;
    article.dataset.itemId = item.id;
    const group = element("div", "rating");
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", this.strings.rateReply);
    for (const [rating, name] of [[1, this.strings.goodReply], [-1, this.strings.badReply]]) {
      const thumb = element("button", "action thumb " + (rating === 1 ? "up" : "down"));
      thumb.type = "button";
      thumb.dataset.rating = rating;
      thumb.setAttribute("aria-label", name);
      thumb.title = name;
      thumb.setAttribute("aria-pressed", "false");
      thumb.appendChild(icon());
      thumb.addEventListener("click", () => this.choose(article, item.id, thumb));
      group.appendChild(thumb);
    }
    article.querySelector(".message-actions").appendChild(group);
    this.loaded.then(() => this.show(article, item.id));
  }

  /* After run.completed: the reply just streamed is stored as `itemId`. */
  attachLast(container, itemId) {
    const replies = container.querySelectorAll(REPLY);
    const last = replies.length ? replies[replies.length - 1] : null;
    if (itemId && last && !last.dataset.itemId && !last.dataset.status) {
      this.attach(last, { id: itemId, role: "assistant" });
    }
  }

  show(article, itemId) {
    const saved = this.saved.get(itemId);
    article.querySelectorAll(".thumb").forEach((thumb) => {
      const pressed = Boolean(saved) && Number(thumb.dataset.rating) === saved.rating;
      thumb.setAttribute("aria-pressed", String(pressed));
    });
  }

  async choose(article, itemId, thumb) {
    const rating = Number(thumb.dataset.rating);
    const before = this.saved.get(itemId);
    if (!before || before.rating !== rating) {
      const kept = before || { comment: "", tags: [] }; // a change keeps comment and tags
      const saved = await this.send(itemId, { rating: rating, comment: kept.comment, tags: kept.tags });
      if (!saved) return;
      this.show(article, itemId);
      this.feedback.announce(rating === 1 ? this.strings.ratedGood : this.strings.ratedBad);
    }
    this.openForm(article, itemId, thumb);
  }

  async send(itemId, body) {
    const url = this.rateUrl.replace(/\/items\/0\//, "/items/" + itemId + "/");
    let response = null;
    let data = {};
    try {
      response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRFToken": csrfToken(), "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      data = await response.json().catch(() => ({}));
    } catch (error) {
      response = null;
    }
    if (!response || !response.ok) {
      this.feedback.showError(data.error || this.strings.actionFailed);
      return null;
    }
    this.feedback.hideError();
    this.saved.set(itemId, data);
    return data;
  }

  /* ---------- the comment and tags ---------- */

  openForm(article, itemId, thumb) {
    const previous = article.querySelector(".rating-form");
    if (previous) previous.remove();
    const saved = this.saved.get(itemId);
    const form = element("form", "rating-form");
    form.setAttribute("aria-label", this.strings.ratingDetails);
    const comment = element("textarea");
    comment.id = "rating-comment-" + itemId;
    comment.name = "comment";
    comment.rows = 2;
    comment.maxLength = 2000; // store.feedback.MAX_COMMENT_CHARS
    comment.value = saved.comment;
    const label = element("label", null, this.strings.ratingComment);
    label.htmlFor = comment.id;
    form.append(label, comment);
    if (this.tags.length) form.appendChild(this.tagBoxes(saved.tags));
    const buttons = element("div", "rating-form-actions");
    const save = element("button", "primary", this.strings.save);
    const cancel = element("button", null, this.strings.cancel);
    cancel.type = "button";
    buttons.append(save, cancel);
    form.appendChild(buttons);
    const close = () => {
      form.remove();
      thumb.focus();
    };
    cancel.addEventListener("click", close);
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.stopPropagation(); // the page's Escape (stop a run, cancel an edit) is not meant
      close();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.saveDetails(form, itemId, close);
    });
    article.appendChild(form);
    form.scrollIntoView({ block: "nearest" }); // the transcript's end may hide it (phones)
    comment.focus({ preventScroll: true });
  }

  tagBoxes(chosen) {
    const fieldset = element("fieldset", "rating-tags");
    fieldset.appendChild(element("legend", null, this.strings.ratingTags));
    for (const tag of this.tags) {
      const box = element("input");
      box.type = "checkbox";
      box.name = "tags";
      box.value = tag;
      box.checked = chosen.includes(tag);
      const label = element("label");
      label.append(box, tag); // the project's own words (FEEDBACK_TAGS)
      fieldset.appendChild(label);
    }
    return fieldset;
  }

  async saveDetails(form, itemId, close) {
    const save = form.querySelector("button.primary");
    save.disabled = true;
    const body = {
      rating: this.saved.get(itemId).rating,
      comment: form.elements.comment.value,
      tags: Array.from(form.querySelectorAll("input[name=tags]:checked"), (box) => box.value),
    };
    const saved = await this.send(itemId, body);
    save.disabled = false;
    if (!saved) return;
    close();
    this.feedback.announce(this.strings.ratingSaved);
  }
}
