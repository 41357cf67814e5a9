/**
 * Registration that lands whole or not at all. The package entry
 * (src/package/load.ts) catches a failure of pi-fold's own registration so
 * that Pi still starts: Pi stops at start-up when an extension's factory
 * throws (it counts a failed extension as a start-up error, in the TUI and in
 * print mode). Caught inside the factory, though, whatever was registered
 * before the failure would stay registered: half a package (a compactor
 * without its fold runtime). So the registration runs against a stand-in of
 * Pi's API that holds every registration (`on`, each `register…` method and
 * `events.on`) until `commit`, which hands them to Pi in their order; a
 * failed registration is dropped with nothing reaching Pi. Everything else
 * (reads, `sendMessage`, `events.emit`) goes straight to Pi, and after the
 * commit so does every call.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type Unsubscribe = () => void;
type AnyFunction = (...args: unknown[]) => unknown;

/** Methods that register something with Pi: held until the commit. */
function registers(name: PropertyKey): boolean {
	return typeof name === "string" && (name === "on" || name.startsWith("register"));
}

export interface StagedRegistration {
	/** The API to register against. */
	api: ExtensionAPI;
	/** Hand every held registration to Pi, in order; from then on `api` is Pi's. */
	commit(): void;
}

export function stageRegistration(pi: ExtensionAPI): StagedRegistration {
	const held: (() => void)[] = [];
	let committed = false;

	/** A registration call on `target`: made now after the commit, else held; an unsubscribe it returns works either way. */
	const stage = (target: object, method: AnyFunction) =>
		function staged(...args: unknown[]): unknown {
			if (committed) return method.apply(target, args);
			let unsubscribe: Unsubscribe | undefined;
			let dropped = false;
			const call = () => {
				if (dropped) return;
				const result = method.apply(target, args);
				if (typeof result === "function") unsubscribe = result as Unsubscribe;
			};
			held.push(call);
			return () => {
				dropped = true;
				unsubscribe?.();
			};
		};

	const events = new Proxy(pi.events, {
		get(target, name) {
			const value = Reflect.get(target, name, target) as unknown;
			if (typeof value !== "function") return value;
			return name === "on" ? stage(target, value as AnyFunction) : (value as AnyFunction).bind(target);
		},
	});

	const api = new Proxy(pi, {
		get(target, name) {
			if (name === "events") return events;
			const value = Reflect.get(target, name, target) as unknown;
			if (typeof value !== "function") return value;
			return registers(name) ? stage(target, value as AnyFunction) : (value as AnyFunction).bind(target);
		},
	});

	return {
		api,
		commit() {
			committed = true;
			for (const call of held.splice(0)) call();
		},
	};
}
