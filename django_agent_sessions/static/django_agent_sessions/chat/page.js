/*
 * The chat page's elements, by their ids in chat.html: what chat.js wires together.
 */
const $ = (id) => document.getElementById(id);

export function pageElements() {
  return {
    form: $("composer"),
    input: $("message"),
    send: $("send-button"),
    stop: $("stop-button"),
    clear: $("clear-button"),
    rename: $("rename-button"),
    remove: $("delete-button"),
    renameForm: $("rename-form"),
    renameInput: $("rename-input"),
    renameCancel: $("rename-cancel"),
    actions: $("conversation-actions"),
    status: $("connection-status"),
    error: $("error-banner"),
    announcer: $("announcer"),
    list: $("conversation-list"),
    title: $("conversation-title"),
    toggle: $("sidebar-toggle"),
    editingNote: $("editing-note"),
    transcript: $("transcript"),
    queued: $("queued-messages"),
  };
}
