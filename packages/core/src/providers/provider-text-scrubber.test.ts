import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import {
  scrubActivity,
  scrubProviderDetails,
  scrubProviderError,
  scrubProviderOutcome,
  scrubProviderText,
  scrubSecrets,
} from "./provider-text-scrubber.js";

describe("scrubProviderText: endpoints", () => {
  it("replaces the endpoint in the CLIs' own error texts, keeping the sentence around it", () => {
    // codex 0.169.0 and claude 2.1.332, as printed against a stand-in on 127.0.0.1 (research/real-clis.md).
    expect(
      scrubProviderText("Reconnecting... 1/5 (unexpected status 401 Unauthorized: stand-in says 401, url: http://127.0.0.1:41404/v1/responses)"),
    ).toBe("Reconnecting... 1/5 (unexpected status 401 Unauthorized: stand-in says 401, url: <endpoint>)");
    expect(scrubProviderText("API Error: 529 stand-in says 529. If it persists, check your inference gateway (127.0.0.1:41403).")).toBe(
      "API Error: 529 stand-in says 529. If it persists, check your inference gateway (<endpoint>).",
    );
    expect(scrubProviderText("error sending request for url (https://api.openai.com/v1/responses))")).toBe(
      "error sending request for url (<endpoint>))",
    );
  });

  it("replaces URLs of any scheme, with userinfo, IPv6 hosts, ports, paths, query keys and fragments", () => {
    const cases: [string, string][] = [
      ["see http://localhost:3000/x", "see <endpoint>"],
      ["at https://user:hunter2@gateway.corp.example:8443/v1?api_key=abc#frag now", "at <endpoint> now"],
      ["ipv6 http://[::1]:8080/v1/messages, again", "ipv6 <endpoint>, again"],
      ["ipv6 zone http://[fe80::1%25eth0]/", "ipv6 zone <endpoint>"],
      ["ws wss://realtime.example.com/socket?token=s3cr3t", "ws <endpoint>"],
      ["quoted 'http://10.0.0.2/a' and \"https://x.test/b\"", "quoted '<endpoint>' and \"<endpoint>\""],
      ['json {"url":"http://127.0.0.1:9/v1"}', 'json {"url":"<endpoint>"}'],
      ['escaped {\\"url\\":\\"http://127.0.0.1:9/v1\\"}', 'escaped {\\"url\\":\\"<endpoint>\\"}'],
      ["balanced https://en.example.org/wiki/A_(b) ok", "balanced <endpoint> ok"],
      ["sentence end http://h.example/x.", "sentence end <endpoint>."],
      ["two http://a.example/1 http://b.example/2", "two <endpoint> <endpoint>"],
      ["glued (url:http://a.example/1)", "glued (url:<endpoint>)"],
    ];
    for (const [input, expected] of cases) expect(scrubProviderText(input), input).toBe(expected);
  });

  it("replaces bare addresses: IPv4 with or without a port, bracketed IPv6, localhost and host:port", () => {
    const cases: [string, string][] = [
      ["connect 127.0.0.1:41403 failed", "connect <endpoint> failed"],
      ["to 192.168.1.20/v1/chat.", "to <endpoint>."],
      ["peer 10.1.2.3 closed", "peer <endpoint> closed"],
      ["at [::1]:11434 and [2001:db8::7]", "at <endpoint> and <endpoint>"],
      ["localhost:8080/v1 is down", "<endpoint> is down"],
      ["gateway (llm.corp.example:8443)", "gateway (<endpoint>)"],
      ["alice:s3cret@10.0.0.9:22", "<redacted>@<endpoint>"],
    ];
    for (const [input, expected] of cases) expect(scrubProviderText(input), input).toBe(expected);
  });

  it("leaves ordinary text alone: versions, file places, times, arrays, counts", () => {
    const unchanged = [
      "claude 2.1.332 (Claude Code)",
      "src/app.ts:12:5 - error TS2322",
      "at Object.<anonymous> (/w/src/app.test.ts:40:11)",
      "FAIL src/foo.test.ts:12",
      "took 12:30 minutes, [1,2,3], ratio 3:2",
      "Original token count: 5",
      "max_tokens=4096 and tokens: many",
      "Missing environment variable: `STANDIN_API_KEY`.",
      "task-runner-12345678 risk-assessment-document",
      "Bearer tokens are sent in a header",
      "",
    ];
    for (const text of unchanged) expect(scrubProviderText(text), text).toBe(text);
  });
});

describe("scrubProviderText: secrets", () => {
  it("redacts bearer tokens, credential headers and assignments, keeping their names", () => {
    const cases: [string, string][] = [
      ["authorization: Bearer abc.def-ghi_jkl", "authorization: Bearer <redacted>"],
      ["Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic <redacted>"],
      ["sent Bearer eyJhbGciOiJIUzI1NiJ9xx to it", "sent Bearer <redacted> to it"],
      ["x-api-key: x", "x-api-key: <redacted>"],
      ['{"x-api-key":"abc123","model":"m"}', '{"x-api-key":"<redacted>","model":"m"}'],
      ["ANTHROPIC_API_KEY=whatever-it-is ok", "ANTHROPIC_API_KEY=<redacted> ok"],
      ["api_key = 'k1', password: hunter2; token=t0k", "api_key = '<redacted>', password: <redacted>; token=<redacted>"],
      ["client_secret=abc&access_token=def", "client_secret=<redacted>&access_token=<redacted>"],
    ];
    for (const [input, expected] of cases) expect(scrubProviderText(input), input).toBe(expected);
  });

  it("redacts keys by their shape alone", () => {
    const cases: [string, string][] = [
      ["key sk-ant-api03-AbCdEf123456_xyz used", "key <redacted> used"],
      ["sk-proj-secretkey123456", "<redacted>"],
      ["(ghp_0123456789abcdefghijABCDEFGHIJ)", "(<redacted>)"],
      ["AKIAIOSFODNN7EXAMPLE rest", "<redacted> rest"],
      ["AIzaSyA1234567890abcdefghijklmnopqrstuv", "<redacted>"],
      ["jwt eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKK", "jwt <redacted>"],
    ];
    for (const [input, expected] of cases) expect(scrubProviderText(input), input).toBe(expected);
  });
});

describe("scrubProviderText: cost", () => {
  const MEGABYTE = 1024 * 1024;
  /** Inputs built to make a backtracking matcher rescan long runs from every start position. */
  const hostile: Record<string, string> = {
    letters: "a".repeat(MEGABYTE),
    dottedLabels: "a.".repeat(MEGABYTE / 2),
    digitsAndDots: "1.".repeat(MEGABYTE / 2),
    schemeLike: "ab+".repeat(MEGABYTE / 3),
    schemeNoSlashes: "http:".repeat(MEGABYTE / 5),
    oneLongUrl: `http://${"x".repeat(MEGABYTE)}`,
    manyUrls: "http://a/ ".repeat(MEGABYTE / 10),
    closingBrackets: `http://h/${")".repeat(MEGABYTE)}`,
    brackets: "[".repeat(MEGABYTE),
    bracketRuns: "[abc:".repeat(MEGABYTE / 5),
    userinfoLike: "a:b ".repeat(MEGABYTE / 4),
    colonRuns: `${"a".repeat(60)}:`.repeat(MEGABYTE / 61),
    keyNames: "token token ".repeat(MEGABYTE / 12),
    keyAssignments: "password=".repeat(MEGABYTE / 9),
    bearerSpaces: `Bearer${" ".repeat(MEGABYTE)}`,
    skRun: "sk-".repeat(MEGABYTE / 3),
    jwtLike: "eyJ".repeat(MEGABYTE / 3),
    jwtSegments: "eyJabcdefgh.".repeat(MEGABYTE / 12),
    hostsWithoutPort: `${"abcdefgh.".repeat(20)} `.repeat(MEGABYTE / 181),
    ipv4Runs: "1.2.3.4.".repeat(MEGABYTE / 8),
  };

  it("takes linear time on 1 MB of hostile text", () => {
    for (const [name, text] of Object.entries(hostile)) {
      const startedAt = performance.now();
      const scrubbed = scrubProviderText(text);
      const elapsedMs = performance.now() - startedAt;
      expect(typeof scrubbed, name).toBe("string");
      // A rule that rescanned from every start would take minutes here; a linear one takes milliseconds.
      expect(elapsedMs, name).toBeLessThan(2_000);
    }
  });

  it("scrubs what it should inside a long text too", () => {
    const filler = "x ".repeat(200_000);
    const scrubbed = scrubProviderText(`${filler}url: http://127.0.0.1:1/v1 key sk-ant-0123456789 ${filler}`);
    expect(scrubbed).toContain("url: <endpoint> key <redacted> ");
    expect(scrubbed).not.toContain("127.0.0.1");
  });
});

describe("scrubbing errors, outcomes and activities", () => {
  it("scrubs an error's message and every string in its details, keeping code and shape", () => {
    const error = new PedelecError("PROVIDER_FAILED", "failed at http://127.0.0.1:9/v1", {
      exitCode: 1,
      stderr: "POST http://127.0.0.1:9/v1 with x-api-key: abc",
      errorMessages: ["Reconnecting... 1/5 (url: http://127.0.0.1:9/v1)"],
      nested: { providerMessage: "Bearer 0123456789abcdef" },
      retriable: true,
    });
    const scrubbed = scrubProviderError(error);
    expect(scrubbed).toBeInstanceOf(PedelecError);
    expect(scrubbed.toWire()).toEqual({
      code: "PROVIDER_FAILED",
      message: "failed at <endpoint>",
      details: {
        exitCode: 1,
        stderr: "POST <endpoint> with x-api-key: <redacted>",
        errorMessages: ["Reconnecting... 1/5 (url: <endpoint>)"],
        nested: { providerMessage: "Bearer <redacted>" },
        retriable: true,
      },
    });
    expect(scrubProviderOutcome({ ok: true })).toEqual({ ok: true });
    expect(scrubProviderOutcome({ ok: false, error, conversationLost: true })).toMatchObject({
      ok: false,
      conversationLost: true,
      error: { message: "failed at <endpoint>" },
    });
  });

  it("drops details nested deeper than any provider writes them", () => {
    let deep: unknown = "http://127.0.0.1/";
    for (let level = 0; level < 20; level += 1) deep = { inner: deep };
    expect(JSON.stringify(scrubProviderDetails(deep))).not.toContain("127.0.0.1");
  });

  it("scrubs an activity's title and detail", () => {
    expect(scrubActivity({ id: "a", kind: "command", status: "completed", title: "curl http://10.0.0.1:8/x", detail: "sk-ant-0123456789" })).toEqual({
      id: "a",
      kind: "command",
      status: "completed",
      title: "curl <endpoint>",
      detail: "<redacted>",
    });
    expect(scrubActivity({ id: "b", kind: "other", status: "started", title: "plain" })).toEqual({
      id: "b",
      kind: "other",
      status: "started",
      title: "plain",
    });
  });
});

describe("scrubSecrets", () => {
  it("keeps addresses in what the agent did, and still hides keys and passwords", () => {
    expect(scrubSecrets("curl -s https://example.com/api?page=2 | head")).toBe("curl -s https://example.com/api?page=2 | head");
    expect(scrubSecrets("echo 127.0.0.1:8080")).toBe("echo 127.0.0.1:8080");
    expect(scrubSecrets("git clone https://ada:hunter2@git.example.com/repo.git")).toBe("git clone https://<redacted>@git.example.com/repo.git");
    expect(scrubSecrets("ANTHROPIC_API_KEY=sk-ant-0123456789abcdef env")).toBe("ANTHROPIC_API_KEY=<redacted> env");
    expect(scrubSecrets("curl -H 'Authorization: Bearer eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl' x")).not.toContain("eyJhbGciOiJI");
  });

  it("is linear on a long hostile input", () => {
    const started = performance.now();
    scrubSecrets(`${"a://".repeat(250_000)}@`);
    scrubSecrets(`${"x".repeat(1_000_000)}@`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
