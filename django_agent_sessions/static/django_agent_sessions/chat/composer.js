/*
 * The message box: Enter sends, Shift+Enter starts a line, it grows with its text; and
 * editing the last message, which takes the last turn back (the rewind URL, the SDK's
 * pop_item pattern as one transaction) before the edited text is sent as a new turn.
 */

export class Composer {
  constructor(ui, page) {
    this.ui = ui; // form, input, editingNote
    // isBusy(), isOpen(), onBusy(), send(text) -> bool, takeBack() -> data or null,
    // dropLastTurn(), changed() (the Send button's state may change)
    this.page = page;
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

  startEdit(text) {
    if (this.page.isBusy()) return;
    this.editing = true;
    this.ui.editingNote.hidden = false;
    this.ui.input.value = text;
    this.grow();
    this.ui.input.focus();
  }

  cancelEdit() {
    this.editing = false;
    this.ui.editingNote.hidden = true;
    this.ui.input.value = "";
    this.grow();
  }

  async submit(event) {
    event.preventDefault();
    const text = this.ui.input.value.trim();
    if (!text || this.rewinding) return;
    if (this.page.isBusy()) {
      this.page.onBusy();
      return;
    }
    if (!this.page.isOpen()) return;
    if (this.editing) {
      if (!(await this.takeBack())) return;
      this.page.dropLastTurn();
      this.editing = false;
      this.ui.editingNote.hidden = true;
    }
    if (!this.page.send(text)) return;
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
