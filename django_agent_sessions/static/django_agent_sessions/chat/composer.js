/*
 * The message box: Enter sends, Shift+Enter starts a line, it grows with its text; its
 * files (attachments.js) go with the text, once uploaded. Editing the last message takes
 * the last turn back (the rewind URL, the SDK's pop_item pattern as one transaction)
 * before the edited text is sent as a new turn, with the files the person kept.
 */

export class Composer {
  constructor(ui, page, attachments) {
    this.ui = ui; // form, input, editingNote
    // isBusy(), isOpen(), onBusy(), onUploading(), send(text, files) -> bool,
    // takeBack() -> data or null, dropLastTurn(), changed() (the Send button may change)
    this.page = page;
    this.attachments = attachments;
    this.editing = false; // the box holds an edited version of the last user message
    this.rewinding = false; // a turn is being taken back
    ui.form.addEventListener("submit", (event) => this.submit(event));
    ui.input.addEventListener("keydown", (event) => this.onKeyDown(event));
    ui.input.addEventListener("input", () => this.grow());
  }

  /* Take the last turn back; its data ({text, removed}), or null. */
  async takeBack() {
    this.rewinding = true;
    this.page.changed();
    try {
      return await this.page.takeBack();
    } finally {
      this.rewinding = false;
      this.page.changed();
    }
  }

  startEdit(text, files) {
    if (this.page.isBusy()) return;
    this.editing = true;
    this.ui.editingNote.hidden = false;
    this.ui.input.value = text;
    this.attachments.reset(files);
    this.grow();
    this.ui.input.focus();
  }

  /* Offer `text` (a branch's message) to send again, or change first. */
  startDraft(text) {
    this.ui.input.value = text;
    this.grow();
  }

  cancelEdit() {
    this.editing = false;
    this.ui.editingNote.hidden = true;
    this.ui.input.value = "";
    this.attachments.reset();
    this.grow();
  }

  async submit(event) {
    event.preventDefault();
    const text = this.ui.input.value.trim();
    const files = this.attachments.files();
    if ((!text && !files.length) || this.rewinding) return;
    if (this.page.isBusy()) {
      this.page.onBusy();
      return;
    }
    if (this.attachments.uploading()) {
      this.page.onUploading();
      return;
    }
    if (!this.page.isOpen()) return;
    if (this.editing) {
      if (!(await this.takeBack())) return;
      this.page.dropLastTurn();
      this.editing = false;
      this.ui.editingNote.hidden = true;
    }
    if (!this.page.send(text, files)) return;
    this.attachments.reset();
    this.ui.input.value = "";
    this.grow();
    this.ui.input.focus();
  }

  grow() {
    // Grows with its text up to the CSS max-height, then scrolls.
    const input = this.ui.input;
    input.style.height = "auto";
    input.style.height = input.scrollHeight + 2 + "px";
  }

  onKeyDown(event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.ui.form.requestSubmit();
    }
  }
}
