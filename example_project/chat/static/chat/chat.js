/*
 * The chat page's client: one websocket per open conversation, speaking the wire protocol
 * of django-agent-sessions (docs/wire-protocol.md).
 *
 * Everything the model or a tool wrote is inserted with textContent, never as HTML, so a
 * reply cannot inject markup; the page's Content-Security-Policy forbids inline scripts
 * as a second line of defence. No build step: plain ES2017, served as a static file.
 */
"use strict";

(function () {
  const body = document.body;
  const config = {
    socketPath: body.dataset.socketPath,
    listUrl: body.dataset.listUrl,
    clearUrl: body.dataset.clearUrl,
    sessionId: body.dataset.sessionId,
  };
  const strings = document.getElementById("chat-strings").dataset;
  const $ = (id) => document.getElementById(id);
  const ui = {
    transcript: $("transcript"),
    form: $("composer"),
    input: $("message"),
    send: $("send-button"),
    stop: $("stop-button"),
    clear: $("clear-button"),
    status: $("connection-status"),
    error: $("error-banner"),
    announcer: $("announcer"),
    list: $("conversation-list"),
    title: $("conversation-title"),
    toggle: $("sidebar-toggle"),
  };

  const MAX_BACKOFF_MS = 15000;
  const state = {
    socket: null,
    connected: false,
    attempts: 0,
    reconnectTimer: null,
    stopped: false, // the server refused us for good (4401/4403): do not retry
    runId: null, // the active run, if any
    streaming: null, // {runId, textElement} of the assistant message being written
    pendingEcho: [], // our own user messages shown before the server confirmed them
  };

  /* ---------- rendering ---------- */

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function scrollToEnd() {
    ui.transcript.scrollTop = ui.transcript.scrollHeight;
  }

  function append(node) {
    const hint = ui.transcript.querySelector(".empty-hint");
    if (hint) hint.remove();
    const nearEnd =
      ui.transcript.scrollHeight - ui.transcript.scrollTop - ui.transcript.clientHeight < 80;
    ui.transcript.appendChild(node);
    if (nearEnd) scrollToEnd();
    return node;
  }

  function messageElement(role, text) {
    const article = element("article", "message message-" + (role === "user" ? "user" : "assistant"));
    article.appendChild(element("h2", "speaker", role === "user" ? strings.you : strings.assistant));
    const textElement = element("div", "text", text);
    article.appendChild(textElement);
    return { article: article, textElement: textElement };
  }

  function collapsible(className, summaryText, contentText) {
    const details = element("details", "entry " + className);
    details.appendChild(element("summary", null, summaryText));
    details.appendChild(element("pre", "payload", contentText));
    return details;
  }

  function shorten(text, length) {
    const flat = String(text).replace(/\s+/g, " ").trim();
    return flat.length > length ? flat.slice(0, length - 1) + "…" : flat;
  }

  function renderItem(item) {
    switch (item.kind) {
      case "message":
        return append(messageElement(item.role, item.text).article);
      case "tool_call":
        return append(
          collapsible("tool-call", strings.toolCall + ": " + item.name, prettyJson(item.arguments)),
        );
      case "tool_output":
        return append(
          collapsible("tool-output", strings.toolOutput + ": " + shorten(item.output, 60), item.output),
        );
      case "reasoning":
        return item.text ? append(collapsible("reasoning", strings.reasoning, item.text)) : null;
      case "handoff":
        return item.target ? append(element("p", "entry handoff", strings.handoff + " " + item.target)) : null;
      default:
        return null; // kinds a chat page need not show
    }
  }

  function prettyJson(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (error) {
      return String(text);
    }
  }

  function showEmptyHint() {
    if (!ui.transcript.querySelector(".message, .entry")) {
      ui.transcript.appendChild(element("p", "empty-hint", strings.emptyTranscript));
    }
  }

  function showError(message) {
    ui.error.textContent = message;
    ui.error.hidden = false;
  }

  function hideError() {
    ui.error.hidden = true;
    ui.error.textContent = "";
  }

  function announce(text) {
    ui.announcer.textContent = "";
    window.setTimeout(function () {
      ui.announcer.textContent = text;
    }, 50);
  }

  /* ---------- run state ---------- */

  function setBusy(runId) {
    state.runId = runId;
    const busy = runId !== null;
    ui.stop.hidden = !busy;
    ui.stop.disabled = false;
    ui.send.hidden = busy;
    ui.clear.disabled = busy;
    body.classList.toggle("is-busy", busy);
    updateComposer();
  }

  function updateComposer() {
    ui.send.disabled = !state.connected || state.runId !== null;
  }

  function streamingText(runId) {
    if (!state.streaming || state.streaming.runId !== runId) {
      const message = messageElement("assistant", "");
      message.article.classList.add("is-streaming");
      append(message.article);
      state.streaming = { runId: runId, article: message.article, textElement: message.textElement };
    }
    return state.streaming;
  }

  function finishStreaming(finalText, note) {
    const current = state.streaming;
    if (!current) return;
    if (typeof finalText === "string") current.textElement.textContent = finalText;
    current.article.classList.remove("is-streaming");
    if (note) current.article.appendChild(element("p", "note", note));
    state.streaming = null;
  }

  function confirmEcho(text) {
    const index = state.pendingEcho.findIndex(function (echo) {
      return echo.text === text;
    });
    if (index === -1) return false;
    state.pendingEcho[index].article.classList.remove("is-pending");
    state.pendingEcho.splice(index, 1);
    return true;
  }

  /* ---------- wire protocol ---------- */

  const handlers = {
    history: function (frame) {
      ui.transcript.replaceChildren();
      state.streaming = null;
      state.pendingEcho = [];
      (frame.items || []).forEach(renderItem);
      // A run in flight: its items so far, then the text of the message being written.
      const active = frame.active_run;
      setBusy(active ? active.run_id : null);
      if (active) {
        (active.items || []).forEach(renderItem);
        if (typeof active.text === "string" && active.text) {
          streamingText(active.run_id).textElement.textContent = active.text;
        }
      }
      showEmptyHint();
      scrollToEnd();
    },
    "run.started": function (frame) {
      hideError();
      setBusy(frame.run_id);
      const input = typeof frame.input === "string" ? frame.input : frame.text;
      if (typeof input === "string" && !confirmEcho(input)) {
        append(messageElement("user", input).article);
      }
    },
    "text.delta": function (frame) {
      if (state.runId === null) setBusy(frame.run_id);
      const current = streamingText(frame.run_id);
      current.textElement.textContent += frame.delta;
      const transcript = ui.transcript;
      if (transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 160) {
        scrollToEnd();
      }
    },
    "item.completed": function (frame) {
      const item = frame.item || {};
      if (item.kind === "message" && item.role === "user") {
        if (!confirmEcho(item.text)) renderItem(item);
        return;
      }
      if (item.kind === "message") {
        // The completed message carries the full text: it repairs any missed delta.
        if (state.streaming && state.streaming.runId === frame.run_id) {
          finishStreaming(item.text);
        } else {
          renderItem(item);
        }
        return;
      }
      finishStreaming();
      renderItem(item);
    },
    "run.completed": function () {
      finishStreaming();
      setBusy(null);
      announce(strings.replied);
      refreshConversations();
    },
    "run.cancelled": function () {
      if (state.streaming) {
        finishStreaming(undefined, strings.stopped);
      } else {
        append(element("p", "entry note", strings.stopped));
      }
      setBusy(null);
      announce(strings.stopped);
      refreshConversations();
    },
    "run.failed": function (frame) {
      finishStreaming();
      setBusy(null);
      const error = frame.error || {};
      const text = strings.failed + ": " + (error.message || error.code || "");
      append(element("p", "entry run-error", text));
      showError(text);
      refreshConversations();
    },
    error: function (frame) {
      if (frame.code === "busy") {
        showError(strings.busy);
      } else {
        showError(frame.message || frame.code);
      }
      const echo = state.pendingEcho.pop();
      if (echo) echo.article.classList.add("is-rejected");
    },
  };

  function onFrame(event) {
    let frame;
    try {
      frame = JSON.parse(event.data);
    } catch (error) {
      return;
    }
    const handler = frame && handlers[frame.type];
    if (handler) handler(frame);
  }

  /* ---------- connection ---------- */

  function socketUrl() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + window.location.host + config.socketPath;
  }

  function setStatus(stateName, text) {
    ui.status.dataset.state = stateName;
    ui.status.textContent = text;
  }

  function connect() {
    window.clearTimeout(state.reconnectTimer);
    state.reconnectTimer = null;
    if (state.stopped) return;
    if (state.attempts) {
      setStatus("reconnecting", strings.reconnecting);
    } else {
      setStatus("connecting", strings.connecting);
    }
    const socket = new WebSocket(socketUrl());
    state.socket = socket;
    socket.addEventListener("open", function () {
      state.connected = true;
      state.attempts = 0;
      setStatus("connected", strings.connected);
      hideError();
      updateComposer();
    });
    socket.addEventListener("message", onFrame);
    socket.addEventListener("close", function (event) {
      if (state.socket !== socket) return;
      state.connected = false;
      state.socket = null;
      updateComposer();
      if (event.code === 4401 || event.code === 4403) {
        state.stopped = true;
        setStatus("offline", strings.offline);
        showError(strings.denied);
        return;
      }
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    // Exponential backoff with jitter, so that a restarted server is not hit by every
    // browser at the same instant.
    const base = Math.min(MAX_BACKOFF_MS, 500 * Math.pow(2, state.attempts));
    const delay = base / 2 + Math.random() * (base / 2);
    state.attempts += 1;
    setStatus("reconnecting", strings.reconnecting);
    state.reconnectTimer = window.setTimeout(connect, delay);
  }

  function sendFrame(frame) {
    if (!state.socket || state.socket.readyState !== WebSocket.OPEN) return false;
    state.socket.send(JSON.stringify(frame));
    return true;
  }

  /* ---------- user actions ---------- */

  function submitMessage(event) {
    event.preventDefault();
    const text = ui.input.value.trim();
    if (!text) return;
    if (state.runId !== null) {
      showError(strings.busy);
      return;
    }
    if (!sendFrame({ type: "user_message", text: text })) return;
    hideError();
    const echo = messageElement("user", text);
    echo.article.classList.add("is-pending");
    append(echo.article);
    state.pendingEcho.push({ text: text, article: echo.article });
    scrollToEnd();
    ui.input.value = "";
    ui.input.focus();
  }

  function onKeyDown(event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.form.requestSubmit();
    }
  }

  function stopRun() {
    if (sendFrame({ type: "cancel" })) ui.stop.disabled = true;
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function clearConversation() {
    if (!window.confirm(strings.confirmClear)) return;
    fetch(config.clearUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
    })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        ui.transcript.replaceChildren();
        state.streaming = null;
        state.pendingEcho = [];
        hideError();
        showEmptyHint();
        ui.input.focus();
      })
      .catch(function () {
        showError(strings.clearFailed);
      });
  }

  function refreshConversations() {
    fetch(config.listUrl, { credentials: "same-origin" })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (data) {
        if (data) renderConversations(data.conversations || []);
      })
      .catch(function () {
        /* the sidebar refreshes again after the next run */
      });
  }

  function renderConversations(conversations) {
    const items = conversations.map(function (conversation) {
      const li = element("li");
      const link = element("a", null, conversation.title || strings.untitled);
      link.href = conversation.url;
      if (conversation.id === config.sessionId) {
        link.setAttribute("aria-current", "page");
        ui.title.textContent = conversation.title || strings.untitled;
        document.title = ui.title.textContent + " · " + document.title.split(" · ").pop();
      }
      li.appendChild(link);
      return li;
    });
    if (!items.length) items.push(element("li", "empty", strings.empty));
    ui.list.replaceChildren.apply(ui.list, items);
  }

  function toggleSidebar() {
    const open = ui.toggle.getAttribute("aria-expanded") !== "true";
    ui.toggle.setAttribute("aria-expanded", String(open));
    body.classList.toggle("sidebar-open", open);
  }

  ui.form.addEventListener("submit", submitMessage);
  ui.input.addEventListener("keydown", onKeyDown);
  ui.stop.addEventListener("click", stopRun);
  ui.clear.addEventListener("click", clearConversation);
  ui.toggle.addEventListener("click", toggleSidebar);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && body.classList.contains("sidebar-open")) {
      toggleSidebar();
      ui.toggle.focus();
    }
  });
  window.addEventListener("online", function () {
    if (!state.socket) connect();
  });
  updateComposer();
  connect();
  ui.input.focus();
})();
