// A chat page on the AI SDK's useChat, talking to django-agent-sessions'
// AI SDK adapter (docs/protocols/ai-sdk.md shows this file; the browser test builds it).
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

const api = "/ai-sdk/chat";
const csrf = document.cookie.match(/csrftoken=([^;]+)/)?.[1] ?? "";
const headers = { "X-CSRFToken": csrf }; // Django's CSRF protection covers the POSTs

function Chat({ id, stored }) {
  const { messages, sendMessage, status, stop, error, addToolApprovalResponse } = useChat({
    id, // the conversation's id
    messages: stored, // its history, from the adapter's messages view
    resume: true, // after a reload, rejoin the reply in flight
    transport: new DefaultChatTransport({ api, headers }),
    // Tool calls that need approval: the decisions go once every call has one.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState("");
  const busy = status === "submitted" || status === "streaming";
  const send = (event) => {
    event.preventDefault();
    sendMessage({ text });
    setText("");
  };
  // With CONTINUE_RUNS_AFTER_DISCONNECT (needed to resume after a reload), aborting
  // the response no longer stops the run: ask for it, then stop reading.
  const halt = () => fetch(`${api}/${id}/cancel`, { method: "POST", headers }).then(stop);
  return (
    <main>
      <ol role="log">
        {messages.map((message) => (
          <li key={message.id} data-role={message.role}>
            {message.parts.map((part, index) => (
              <Part key={index} part={part} decide={addToolApprovalResponse} />
            ))}
          </li>
        ))}
      </ol>
      {error && <p role="alert">{error.message}</p>}
      <form onSubmit={send}>
        <label>
          Message <input value={text} onChange={(event) => setText(event.target.value)} />
        </label>
        <button type="submit" disabled={busy}>Send</button>
        <button type="button" onClick={halt} disabled={!busy}>Stop</button>
      </form>
      <p data-status={status}>{status}</p>
    </main>
  );
}

function Part({ part, decide }) {
  if (part.type === "text") return <p data-part="text">{part.text}</p>;
  if (!part.type.startsWith("tool-")) return null;
  const output = part.state === "output-available" ? String(part.output) : "…";
  const id = part.approval?.id;
  return (
    <p data-part="tool" data-state={part.state}>
      {part.type.slice(5)}({JSON.stringify(part.input)}): {output}
      {part.state === "approval-requested" && (
        <>
          <button onClick={() => decide({ id, approved: true })}>Approve</button>
          <button onClick={() => decide({ id, approved: false, reason: "Not now." })}>Reject</button>
        </>
      )}
    </p>
  );
}

const id = new URLSearchParams(location.search).get("chat");
const stored = await fetch(`${api}/${id}/messages`).then((response) => response.json());
createRoot(document.getElementById("root")).render(<Chat id={id} stored={stored} />);
