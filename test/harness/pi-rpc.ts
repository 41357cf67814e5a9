/**
 * A minimal client for Pi's RPC mode (`pi --mode rpc`): JSON lines on stdin and stdout.
 *
 * Owns the framing (records split on LF only, never on U+2028/U+2029 as
 * readline would), request/response correlation by id, a cursor-based wait for
 * events so a fast event is never missed, and auto-cancelling extension UI
 * dialogs so a command that asks a question cannot hang a test. Process setup
 * (sandbox, env, arguments) comes from pi-cli.ts.
 */

import type { ChildProcess } from "node:child_process";
import { type PiSandbox, reportHostProblems, spawnPi } from "./pi-cli.ts";

/** Default wait for one response or event. */
export const DEFAULT_RPC_WAIT_MS = 30_000;
/** Grace period for an orderly exit after stdin closes, before SIGKILL. */
export const RPC_EXIT_GRACE_MS = 10_000;

/** Extension UI methods that block until the client answers (see docs/rpc-extension-ui.md). */
const DIALOG_METHODS: ReadonlySet<string> = new Set(["select", "confirm", "input", "editor"]);

/** One stdout record: a response, a session event, or an extension UI request. */
export interface RpcRecord {
	type: string;
	id?: string;
	[field: string]: unknown;
}

export interface RpcResponse extends RpcRecord {
	type: "response";
	command: string;
	success: boolean;
	data?: unknown;
	error?: string;
}

/** A command as Pi's rpc-commands.md defines it; the client adds the id. */
export interface RpcCommand {
	type: string;
	[field: string]: unknown;
}

export interface PiRpc {
	/** Every stdout record so far, in order. */
	readonly records: readonly RpcRecord[];
	/** Index the next record will get; pass it to waitFor to see only later records. */
	mark(): number;
	/** Send a command and resolve with its response (rejects on timeout or exit). */
	send(command: RpcCommand, timeoutMs?: number): Promise<RpcResponse>;
	/** First record at index ≥ since that matches, waiting for it if needed. */
	waitFor(predicate: (record: RpcRecord) => boolean, since?: number, timeoutMs?: number): Promise<RpcRecord>;
	/** Send a prompt and wait until Pi reports `agent_settled` (or the prompt was handled without a run). */
	promptAndSettle(message: string, timeoutMs?: number): Promise<{ response: RpcResponse; records: RpcRecord[] }>;
	stderr(): string;
	/** Close stdin (Pi's orderly shutdown) and wait for the exit. */
	close(): Promise<{ code: number | null; stderr: string }>;
}

/** Start Pi in RPC mode inside the sandbox; commands can be sent right away (stdin is buffered). */
export function startRpc(sandbox: PiSandbox, extraArgs: readonly string[] = []): PiRpc {
	const child = spawnPi(sandbox, ["--mode", "rpc", ...extraArgs]);
	const records: RpcRecord[] = [];
	const waiters = new Set<() => void>();
	let stderr = "";
	let exited: { code: number | null } | undefined;
	let nextId = 1;
	let buffer = "";

	const notify = (): void => {
		for (const wake of [...waiters]) wake();
	};
	const accept = (line: string): void => {
		const text = line.endsWith("\r") ? line.slice(0, -1) : line;
		if (text.trim().length === 0) return;
		let record: RpcRecord;
		try {
			record = JSON.parse(text) as RpcRecord;
		} catch {
			// Pi reserves stdout for records; keep anything else visible rather than crash the reader.
			record = { type: "non_json_stdout", text };
		}
		records.push(record);
		answerDialog(child, record);
		notify();
	};
	child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
		buffer += chunk;
		let newline = buffer.indexOf("\n");
		while (newline >= 0) {
			accept(buffer.slice(0, newline));
			buffer = buffer.slice(newline + 1);
			newline = buffer.indexOf("\n");
		}
	});
	child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
		stderr += chunk;
	});
	const exitPromise = new Promise<{ code: number | null }>((resolve) => {
		child.on("close", (code) => {
			if (buffer.length > 0) accept(buffer);
			exited = { code };
			notify();
			resolve(exited);
		});
	});

	const waitFor = (predicate: (record: RpcRecord) => boolean, since = 0, timeoutMs = DEFAULT_RPC_WAIT_MS) =>
		new Promise<RpcRecord>((resolve, reject) => {
			let scanned = since;
			const check = (): boolean => {
				for (; scanned < records.length; scanned++) {
					const record = records[scanned];
					if (record !== undefined && predicate(record)) {
						finish();
						resolve(record);
						return true;
					}
				}
				if (exited) {
					finish();
					reject(new Error(`pi exited (code ${exited.code}) before the awaited record; stderr:\n${stderr}`));
					return true;
				}
				return false;
			};
			const timer = setTimeout(() => {
				finish();
				reject(new Error(`timed out after ${timeoutMs} ms waiting for an RPC record; stderr:\n${stderr}`));
			}, timeoutMs);
			const finish = (): void => {
				clearTimeout(timer);
				waiters.delete(wake);
			};
			const wake = (): void => {
				check();
			};
			if (!check()) waiters.add(wake);
		});

	const send = async (command: RpcCommand, timeoutMs = DEFAULT_RPC_WAIT_MS): Promise<RpcResponse> => {
		const id = `harness-${nextId++}`;
		const since = records.length;
		child.stdin?.write(`${JSON.stringify({ ...command, id })}\n`);
		const response = await waitFor((record) => record.type === "response" && record.id === id, since, timeoutMs);
		return response as RpcResponse;
	};

	return {
		records,
		mark: () => records.length,
		send,
		waitFor,
		promptAndSettle: async (message, timeoutMs = DEFAULT_RPC_WAIT_MS) => {
			const since = records.length;
			const response = await send({ type: "prompt", message }, timeoutMs);
			const disposition = (response.data as { disposition?: string } | undefined)?.disposition;
			// A handled prompt (an extension command) starts no run, so no agent_settled follows.
			if (response.success && disposition !== "handled") {
				await waitFor((record) => record.type === "agent_settled", since, timeoutMs);
			}
			return { response, records: records.slice(since) };
		},
		stderr: () => stderr,
		close: async () => {
			if (!exited) {
				child.stdin?.end();
				const timer = setTimeout(() => child.kill("SIGKILL"), RPC_EXIT_GRACE_MS);
				await exitPromise;
				clearTimeout(timer);
				// Extension errors reach RPC clients as records, others as stderr lines: check both once.
				reportHostProblems([stderr, ...records.map((record) => JSON.stringify(record))].join("\n"));
			}
			return { code: exited?.code ?? null, stderr };
		},
	};
}

/** Answer a blocking extension dialog with `cancelled`, so a command that asks cannot stall the run. */
function answerDialog(child: ChildProcess, record: RpcRecord): void {
	if (record.type !== "extension_ui_request" || typeof record.id !== "string") return;
	if (!DIALOG_METHODS.has(String(record.method))) return;
	child.stdin?.write(`${JSON.stringify({ type: "extension_ui_response", id: record.id, cancelled: true })}\n`);
}
