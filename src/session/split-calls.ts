/**
 * Calls a host splits in two: Codex CLI starts a long command with
 * `exec_command` and, while it still runs (its result's frame says "Process
 * running with session ID N"), reads the rest of its output with
 * `write_stdin {"session_id": N}`. The second call's arguments name no
 * command, so a brief of its result would say only what came back. This
 * module finds the command a session was started with, so the brief can
 * name it.
 *
 * Read from typed fields and the host's frame only (`hostOutputHeader`):
 * the call's `session_id` argument, the starting call's `cmd` / `command`.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { contentText } from "../text/lines.ts";
import { hostOutputHeader } from "../text/tool-text.ts";
import { isPlainRecord } from "./records/record-guards.ts";

/** Argument naming the host session a call continues. */
export const SESSION_ID_ARG = "session_id";
/** Arguments a starting call names its command with (Codex `exec_command` says `cmd`). */
const COMMAND_ARGS = ["cmd", "command"] as const;
/** Entries before a fold read for the calls that started its sessions: a split call continues a recent one. */
export const SPLIT_CALL_LOOKBACK_ENTRIES = 400;

/** The host session a call continues, when its arguments name one. */
export function continuedSession(args: unknown): string | undefined {
	if (!isPlainRecord(args)) return undefined;
	const id = args[SESSION_ID_ARG];
	return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

/** Session id → the command that started it, for every session a result's frame says is still running. */
export function hostSessionCommands(entries: readonly SessionEntry[]): Map<string, string> {
	const commands = new Map<string, string>();
	const callCommand = new Map<string, string>();
	for (const entry of entries) {
		if (entry.type !== "message") continue;
		const message = entry.message;
		if (message.role === "assistant") {
			for (const part of message.content) {
				if (part.type !== "toolCall" || !isPlainRecord(part.arguments)) continue;
				const args = part.arguments;
				const command = COMMAND_ARGS.map((key) => args[key]).find((value) => typeof value === "string");
				if (typeof command === "string") callCommand.set(part.id, command);
			}
		} else if (message.role === "toolResult") {
			const command = callCommand.get(message.toolCallId);
			if (command === undefined) continue;
			const { sessionId } = hostOutputHeader(contentText(message.content));
			if (sessionId !== undefined) commands.set(sessionId, command);
		}
	}
	return commands;
}
