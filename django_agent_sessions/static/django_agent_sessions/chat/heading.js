/*
 * The conversation's heading: its title (also the document's), and renaming it in place.
 */

export class Heading {
  constructor(ui, rename, onRenamed) {
    this.ui = ui; // title, renameForm, renameInput, renameCancel, actions, rename (button)
    this.rename = rename; // async (title) => the stored title, or null
    this.onRenamed = onRenamed;
    ui.rename.addEventListener("click", () => this.start());
    ui.renameForm.addEventListener("submit", (event) => this.submit(event));
    ui.renameCancel.addEventListener("click", () => this.end());
  }

  get isRenaming() {
    return !this.ui.renameForm.hidden;
  }

  setTitle(title) {
    this.ui.title.textContent = title;
    document.title = title + " · " + document.title.split(" · ").pop();
  }

  /* The title as the server lists it, unless the user is typing a new one. */
  showListed(title) {
    if (!this.isRenaming) this.setTitle(title);
  }

  start() {
    const ui = this.ui;
    ui.renameInput.value = ui.title.textContent;
    ui.title.hidden = true;
    ui.actions.hidden = true;
    ui.renameForm.hidden = false;
    ui.renameInput.focus();
    ui.renameInput.select();
  }

  end() {
    const ui = this.ui;
    ui.renameForm.hidden = true;
    ui.title.hidden = false;
    ui.actions.hidden = false;
    ui.rename.focus();
  }

  async submit(event) {
    event.preventDefault();
    const title = await this.rename(this.ui.renameInput.value);
    if (title === null) return;
    this.setTitle(title);
    this.end();
    this.onRenamed();
  }
}
