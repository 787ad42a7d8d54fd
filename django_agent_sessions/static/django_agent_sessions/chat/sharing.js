/*
 * The chat's Share action (chat/sharing.py): a form under the conversation's actions
 * that makes a read-only link of it (a snapshot up to now, or one that follows it; tool
 * calls hidden unless asked for) and shows the link to copy. The button appears with
 * the conversation's other actions, once it has its first message (the Rename button
 * says so: it is shown then).
 */
import { post } from "./http.js";

export class Sharing {
  constructor(button, form, rename) {
    this.button = button;
    this.form = form;
    this.result = form.querySelector("#share-result");
    this.url = form.querySelector("#share-url");
    button.addEventListener("click", () => this.toggle(form.hidden));
    form.querySelector("#share-cancel").addEventListener("click", () => this.toggle(false));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    if (rename) {
      const follow = () => (button.hidden = rename.hidden);
      new MutationObserver(follow).observe(rename, { attributes: true, attributeFilter: ["hidden"] });
    }
  }

  toggle(open) {
    this.form.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (open) this.form.querySelector("input, select").focus();
    else this.button.focus();
  }

  async create() {
    const fields = new FormData(this.form);
    const feedback = {
      failed: (error) => (this.result.textContent = error || this.form.dataset.failed),
      succeeded: () => (this.result.textContent = ""),
    };
    const data = await post(this.form.dataset.url, fields, feedback);
    if (!data) return;
    this.url.value = data.url;
    this.url.hidden = false;
    this.result.textContent = this.form.dataset.created || "";
    this.url.focus();
    this.url.select();
  }
}

const button = document.getElementById("share-button");
const form = document.getElementById("share-form");
if (button && form) new Sharing(button, form, document.getElementById("rename-button"));
