import type { Page } from "playwright-core";

/**
 * In-page helpers, installed once per page: create a session with a recorded event log and an `add_todo` tool whose
 * handler counts its calls. Everything runs inside the page, through the real SDK bundle.
 */
export async function installRecorder(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as Record<string, any>;
    w.log = [];
    w.handlerCalls = [];
    w.todos = [];
    w.tools = [
      w.sdk.defineTool({
        name: "add_todo",
        description: "Add a card to the to-do board",
        argsSchema: {
          type: "object",
          properties: { title: { type: "string", minLength: 1, maxLength: 100 } },
          required: ["title"],
          additionalProperties: false,
        },
      }),
    ];
    w.record = (session: any) => {
      session.onChatDelta((delta: string, ctx: any) => w.log.push({ kind: "delta", delta, turnId: ctx.turnId, seq: ctx.seq }));
      session.onChat((message: any) => w.log.push({ kind: "chat", text: message.text }));
      session.onStatus((status: string, ctx: any) => w.log.push({ kind: "status", status, source: ctx.source }));
      session.onActivity((activity: any) => w.log.push({ kind: "activity", activity }));
      session.onError((error: any) => w.log.push({ kind: "error", code: error.code, message: error.message }));
      session.onEnded(() => w.log.push({ kind: "ended" }));
      session.onTool("add_todo", (args: any) => {
        w.handlerCalls.push(args);
        const card = { id: `card-${w.todos.length + 1}`, title: args.title };
        w.todos.push(card);
        return card;
      });
    };
    w.pedelec = new w.sdk.Pedelec();
    w.create = async (extra: object = {}) => {
      const session = await w.pedelec.createSession({
        provider: "claude",
        skills: { guidance: "A to-do board.", tools: w.tools },
        ...extra,
      });
      w.session = session;
      w.record(session);
      return { sessionId: session.sessionId, workspace: session.workspace, status: session.getStatus() };
    };
    w.resume = async (sessionId: string) => {
      const session = await w.pedelec.resumeSession(sessionId);
      w.session = session;
      w.record(session);
      return { sessionId: session.sessionId, status: session.getStatus() };
    };
    w.send = async (text: string) => {
      try {
        await w.session.sendText(text);
        return { ok: true };
      } catch (error: any) {
        return { ok: false, code: error.code, message: error.message };
      }
    };
  });
}

/** Runs an async in-page expression and returns its result or its PedelecError code. */
export async function attempt<T>(page: Page, body: string): Promise<{ ok: true; value: T } | { ok: false; code: string; message: string }> {
  return page.evaluate(async (source) => {
    try {
      // The test's own source text, compiled in the page: the point of this helper.
      const value = await new Function(`return (async () => { ${source} })();`)();
      return { ok: true as const, value };
    } catch (error: any) {
      return { ok: false as const, code: String(error?.code ?? "NO_CODE"), message: String(error?.message ?? error) };
    }
  }, body);
}

export async function logOf(page: Page): Promise<any[]> {
  return page.evaluate(() => (window as unknown as { log: any[] }).log);
}
