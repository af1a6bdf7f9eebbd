// Diagnostics back to the engine through its Log RPC, attached to a resource URN so the CLI shows a
// long-running step's output under that resource while it runs. Without an engine address (unit tests)
// messages go to a caller-supplied sink instead.
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";

export type Severity = "debug" | "info" | "warning" | "error";

export interface LogSink {
  log(severity: Severity, message: string, urn?: string): void;
  /** Resolves once every message sent so far has been delivered (or failed). */
  flush(): Promise<void>;
}

const SEVERITY: Record<Severity, number> = {
  debug: engproto.LogSeverity.DEBUG,
  info: engproto.LogSeverity.INFO,
  warning: engproto.LogSeverity.WARNING,
  error: engproto.LogSeverity.ERROR,
};

/**
 * Sends to the engine's Log RPC, one call at a time so messages arrive in order. Lines that queue up
 * while a call is in flight (a chatty command) are coalesced per resource and severity into one
 * multi-line message, so a burst of output costs a few RPCs rather than one per line.
 */
export class EngineLog implements LogSink {
  private readonly client: engrpc.EngineClient;
  private readonly queue: { severity: Severity; message: string; urn?: string }[] = [];
  private pumping: Promise<void> | undefined;

  constructor(engineAddress: string) {
    this.client = new engrpc.EngineClient(engineAddress, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": 400 * 1024 * 1024,
    });
  }

  log(severity: Severity, message: string, urn?: string): void {
    this.queue.push({ severity, message, urn });
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue.shift()!;
      const lines = [head.message];
      let size = head.message.length;
      while (this.queue.length > 0 && this.queue[0].urn === head.urn && this.queue[0].severity === head.severity && size < 64 * 1024) {
        const next = this.queue.shift()!;
        lines.push(next.message);
        size += next.message.length + 1;
      }
      await this.send(head.severity, lines.join("\n"), head.urn);
    }
  }

  private send(severity: Severity, message: string, urn?: string): Promise<void> {
    const req = new engproto.LogRequest();
    req.setSeverity(SEVERITY[severity] as engproto.LogSeverity);
    req.setMessage(message);
    if (urn) req.setUrn(urn);
    // A lost log line must never fail the operation it describes; bound each call, ignore errors.
    return new Promise((resolve) => this.client.log(req, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, () => resolve()));
  }

  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
  }
}

/** Collects messages in memory (tests) or forwards them to stderr. */
export class MemoryLog implements LogSink {
  readonly messages: { severity: Severity; message: string; urn?: string }[] = [];
  log(severity: Severity, message: string, urn?: string): void {
    this.messages.push({ severity, message, urn });
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Replaces every occurrence of the given secret values with "[secret]". Very short values (and short
 * lines of multi-line values) are left alone: they cannot be told apart from ordinary text and
 * redacting them would garble every line.
 */
export function makeRedactor(secrets: Iterable<string>): (text: string) => string {
  const all = [...secrets];
  // Output is logged line by line, so a multi-line secret (a key) must also be redacted per line.
  const lines = all.filter((s) => s.includes("\n")).flatMap((s) => s.split(/\r?\n/).filter((l) => l.trim().length >= 8));
  const list = [...new Set([...all.filter((s) => s.length >= 3), ...lines])].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const s of list) out = out.split(s).join("[secret]");
    return out;
  };
}
