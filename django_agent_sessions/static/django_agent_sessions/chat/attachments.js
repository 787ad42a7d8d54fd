/*
 * Files for the next message: chosen with the Attach button, dropped on the message box
 * or pasted into it. Each is uploaded at once (POST c/<id>/files/ with the CSRF token,
 * its progress shown) and listed above the message box, an image with its preview (from
 * the server, once stored), each with a Remove button. The message then names the
 * stored files' ids (`files` of user_message). The server decides what it takes (the
 * type from the bytes, the sizes, each person's rate and total); the checks here only
 * spare a hopeless upload, and say the same thing sooner.
 */
import { element, fill } from "./dom.js";
import { csrfToken } from "./http.js";
import { fileUrl, formatSize, isImage } from "./files.js";

export class Attachments {
  constructor(ui, config, strings, feedback, changed) {
    this.ui = ui; // button, picker (input type=file), list, dropZone, input (the textarea)
    this.url = config.uploadUrl;
    this.fileUrl = config.fileUrl;
    this.types = (config.uploadTypes || "").split(" ").filter(Boolean);
    this.maxBytes = Number(config.uploadMaxBytes);
    this.maxFiles = Number(config.uploadMaxFiles);
    this.strings = strings;
    this.feedback = feedback;
    this.changed = changed; // the Send button's state may change
    this.entries = []; // {name, size, type, id, url, request, node}
    ui.button.addEventListener("click", () => ui.picker.click());
    ui.picker.addEventListener("change", () => {
      this.add(ui.picker.files);
      ui.picker.value = "";
    });
    ui.input.addEventListener("paste", (event) => {
      const files = event.clipboardData ? event.clipboardData.files : null;
      if (files && files.length) {
        event.preventDefault();
        this.add(files);
      }
    });
    this.listenForDrops(ui.dropZone);
  }

  listenForDrops(zone) {
    const carriesFiles = (event) => event.dataTransfer && [...event.dataTransfer.types].includes("Files");
    zone.addEventListener("dragover", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      zone.classList.add("is-dropping");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("is-dropping"));
    zone.addEventListener("drop", (event) => {
      zone.classList.remove("is-dropping");
      if (!carriesFiles(event)) return;
      event.preventDefault();
      this.add(event.dataTransfer.files);
    });
  }

  /* The stored files, in the order shown, as the wire shows them. */
  files() {
    return this.entries
      .filter((entry) => entry.id !== null)
      .map((entry) => ({ id: entry.id, name: entry.name, content_type: entry.type, size: entry.size }));
  }

  uploading() {
    return this.entries.some((entry) => entry.id === null);
  }

  /* Start a message's list again: empty, or `files` already stored (an edit). */
  reset(files) {
    this.entries.forEach((entry) => entry.request && entry.request.abort());
    this.entries = [];
    this.ui.list.replaceChildren();
    (files || []).forEach((file) => {
      const entry = { name: file.name, size: file.size, type: file.content_type, id: file.id };
      this.entries.push(entry);
      this.show(entry);
      this.stored(entry, { ...file, url: fileUrl(this.fileUrl, file.id) });
    });
    this.update();
  }

  add(files) {
    for (const file of files) {
      const refusal = this.refusal(file);
      if (refusal) {
        this.feedback.showError(refusal);
        continue;
      }
      const entry = { name: file.name, size: file.size, type: file.type, id: null };
      this.entries.push(entry);
      this.show(entry);
      this.upload(entry, file);
    }
    this.update();
  }

  refusal(file) {
    const name = file.name || this.strings.file;
    if (this.entries.length >= this.maxFiles) {
      return fill(this.strings.tooManyFiles, { count: this.maxFiles });
    }
    if (file.type && this.types.length && !this.types.includes(file.type)) {
      return fill(this.strings.typeRefused, { name: name });
    }
    if (file.size > this.maxBytes) {
      return fill(this.strings.fileTooLarge, { name: name, size: formatSize(this.maxBytes) });
    }
    return null;
  }

  show(entry) {
    const node = element("li", "attachment is-uploading");
    const label = element("span", "attachment-name", entry.name || this.strings.file);
    const size = element("span", "attachment-size", formatSize(entry.size));
    const progress = element("progress", "attachment-progress");
    progress.max = 100;
    progress.setAttribute("value", "0");
    progress.setAttribute("aria-label", this.strings.uploading + " " + (entry.name || ""));
    const remove = element("button", "attachment-remove", "×");
    remove.type = "button";
    remove.setAttribute("aria-label", fill(this.strings.removeFile, { name: entry.name || this.strings.file }));
    remove.addEventListener("click", () => this.remove(entry));
    node.append(label, size, progress, remove);
    entry.node = node;
    this.ui.list.appendChild(node);
  }

  upload(entry, file) {
    const form = new FormData();
    form.append("file", file);
    const request = new XMLHttpRequest();
    entry.request = request;
    request.open("POST", this.url);
    request.setRequestHeader("X-CSRFToken", csrfToken());
    request.responseType = "json";
    request.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      // An attribute, not the property: themes and tests can observe it.
      const percent = Math.round((100 * event.loaded) / event.total);
      entry.node.querySelector("progress").setAttribute("value", String(percent));
    });
    request.addEventListener("load", () => {
      entry.request = null;
      const answer = request.response || {};
      if (request.status === 201) this.stored(entry, answer);
      else this.failed(entry, answer.error);
    });
    request.addEventListener("error", () => this.failed(entry));
    request.send(form);
  }

  stored(entry, answer) {
    entry.id = answer.id;
    entry.type = answer.content_type;
    entry.node.classList.remove("is-uploading");
    entry.node.querySelector("progress").remove();
    if (isImage(answer.content_type) && answer.url) {
      const preview = element("img", "attachment-preview");
      preview.src = answer.url;
      preview.alt = "";
      entry.node.prepend(preview);
    }
    this.update();
  }

  failed(entry, message) {
    entry.request = null;
    this.feedback.showError(message || this.strings.uploadFailed);
    this.remove(entry, false);
  }

  remove(entry, refocus = true) {
    if (entry.request) entry.request.abort();
    const index = this.entries.indexOf(entry);
    if (index === -1) return;
    this.entries.splice(index, 1);
    entry.node.remove();
    if (refocus) {
      // Focus the next file's Remove button, else the Attach button: never <body>.
      const next = this.entries[Math.min(index, this.entries.length - 1)];
      (next ? next.node.querySelector("button") : this.ui.button).focus();
    }
    this.update();
  }

  update() {
    this.ui.list.hidden = this.entries.length === 0;
    // A message may be files alone.
    this.ui.input.required = this.entries.length === 0;
    this.changed();
  }
}
