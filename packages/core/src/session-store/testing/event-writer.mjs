// Appends events to one session of a session store as fast as it can, printing each seq once its transaction has
// committed, until it is killed. Drives the built SessionStore (run `npx tsc -b` first).
//   node event-writer.mjs <store file> <session id>
import { SessionStore } from "../../../dist/session-store/session-store.js";

const [file, sessionId] = process.argv.slice(2);
if (file === undefined || sessionId === undefined) {
  process.stderr.write("usage: event-writer.mjs <store file> <session id>\n");
  process.exit(2);
}

// A stray writer whose parent died stops on its own.
const stopAt = Date.now() + 60_000;
const store = SessionStore.open(file, { eventLimitPerSession: 10_000_000 });
if (store.get(sessionId) === undefined) {
  const now = new Date().toISOString();
  store.insertSession({
    sessionId,
    origin: "https://app.example.com",
    provider: "claude",
    model: null,
    effortLevel: "medium",
    effortArgv: [],
    access: "sandbox",
    autoEndOnDisconnect: true,
    workspace: { path: "/srv/crash-test", managed: false },
    guidance: "",
    tools: [],
    executablePath: "/usr/bin/true",
    providerSessionId: null,
    status: "idle",
    activeTurn: null,
    createdAt: now,
    lastActivityAt: now,
    endedAt: null,
    endReason: null,
    lastSeq: 0,
  });
}

const padding = "crash ".repeat(40);
for (let seq = store.get(sessionId).lastSeq + 1; Date.now() < stopAt; seq += 1) {
  const turnId = `turn-${Math.floor(seq / 100)}`;
  store.appendEvent(
    {
      type: "event",
      sessionId,
      seq,
      emittedAt: new Date().toISOString(),
      event: { type: "chat-delta", turnId, messageId: "message-1", delta: `${seq} ${padding}` },
    },
    // The row's fields follow from the seq, so a reader can tell whether the row and the event were written together.
    { status: seq % 2 === 0 ? "running" : "waiting_tool_result", activeTurn: { turnId, turnKind: "user" } },
  );
  // Printed only once the commit has returned, so every seq the parent reads is committed.
  process.stdout.write(`${seq}\n`);
}
store.close();
