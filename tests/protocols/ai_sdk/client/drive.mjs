// The AI SDK's own client against the adapter, as a Node program: DefaultChatTransport
// sends a message, readUIMessageStream builds the reply as useChat does, the history is
// loaded back, and the resume finds nothing in flight. Prints what it saw as JSON.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [base, cookie, csrf, chatId] = process.argv.slice(2);
const headers = { Cookie: `${cookie}; csrftoken=${csrf}`, "X-CSRFToken": csrf };
const transport = new DefaultChatTransport({ api: `${base}/ai-sdk/chat`, headers });
const textOf = (message) =>
  message.parts.filter((part) => part.type === "text").map((part) => part.text).join("");

async function reply(messages) {
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  const texts = [];
  let message;
  for await (const snapshot of readUIMessageStream({ stream })) {
    message = structuredClone(snapshot);
    texts.push(textOf(message));
  }
  return { message, texts };
}

const asked = { id: "u-1", role: "user", parts: [{ type: "text", text: "What's the weather?" }] };
const { message, texts } = await reply([asked]);
const loaded = await (await fetch(`${base}/ai-sdk/chat/${chatId}/messages`, { headers })).json();
const resumed = await transport.reconnectToStream({ chatId });
// What the client holds, as JSON carries it (undefined fields dropped), beside the store's.
const streamed = JSON.parse(JSON.stringify([asked, message]));
console.log(JSON.stringify({ streamed, loaded, texts, resumed }));
