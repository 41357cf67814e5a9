/**
 * In-process Pi 1.6.0 sessions for tests: the real AgentSession, a scripted faux model, no network.
 *
 * Owns building an `AgentSession` through Pi's SDK with pi-ai's faux provider,
 * temp agent/cwd/session directories, in-memory settings, inline extension
 * factories, a UI context that records what extensions show, and a log of the
 * messages of every request the model received. The model's replies are a
 * script of faux assistant messages (see `reply` and `callTools`). Side
 * requests of pi-fold's summarizer (recognised by its system prompt) never
 * consume the script: `sideReply` answers them and `sideRequests` logs them.
 */

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	createFauxCore,
	createProvider,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	InMemoryCredentialStore,
	InMemoryModelsStore,
	type Message,
	type Model,
	type ToolCall,
} from "@earendil-works/pi-ai";
import {
	type AgentSession,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionCommandContextActions,
	type InlineExtension,
	initTheme,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { SUMMARIZER_PROMPT_START } from "../../src/fold/summarizer/summarizer-prompt.ts";
import { contentText } from "../../src/text/lines.ts";
import { type CapturedUi, captureUiContext, emptyCapture } from "./capture-ui.ts";
import { providerVisibleDefects, reportProblem } from "./tripwire.ts";

/** Provider and model ids of the faux model. */
export const FAUX_PROVIDER_ID = "faux";
export const FAUX_MODEL_ID = "faux-1";
/** Reply when no script step is left (the loopback provider's rule too), so unscripted summary calls succeed. */
export const FAUX_FALLBACK_TEXT = "ok";
/** Default answer to a summarizer side request: short, fact-free, accepted as a brief. */
export const FAUX_SIDE_REPLY_TEXT = "The span's work was done; nothing is left open.";
/** Default model window of the faux model (pi-ai's faux default). */
export const FAUX_CONTEXT_WINDOW = 128_000;

/** Pi's settings shape (not exported by name from the package root). */
export type HarnessSettings = NonNullable<Parameters<typeof SettingsManager.inMemory>[0]>;

export interface SdkHarnessOptions {
	/** Extension factories loaded inline, e.g. this package's default export. */
	extensions?: InlineExtension[];
	/** Assistant replies, played in request order; once used up, the model answers FAUX_FALLBACK_TEXT. */
	script?: FauxResponseStep[];
	/** Persist the session as a JSONL file under the harness's session dir. Default: in memory. */
	persist?: boolean;
	/** Open this harness's session file again in a new process's place (a resume); the closed harness's dirs are reused. */
	resume?: SdkHarness;
	/** Settings (in memory). Automatic compaction is off unless given here. */
	settings?: HarnessSettings;
	/** Tool allowlist (Pi's `tools` option). Default: Pi's defaults plus extension tools. */
	tools?: string[];
	/**
	 * "capture" (default): extensions get a UI (hasUI true, mode "rpc") whose output is recorded in `ui`.
	 * "none": no UI, as in print mode (hasUI false, mode "print", notify is a no-op).
	 */
	ui?: "capture" | "none";
	contextWindow?: number;
	/** Answers each summarizer side request (default: FAUX_SIDE_REPLY_TEXT); a factory may delay or fail. */
	sideReply?: (request: SdkRequest) => FauxResponseStep;
}

/** The messages of one request the faux model received (system prompt and tool declarations included). */
export interface SdkRequest {
	messages: Message[];
}

export interface SdkHarness {
	session: AgentSession;
	model: Model<string>;
	/** Every request the model received, in order (summarizer side requests excluded). */
	readonly requests: readonly SdkRequest[];
	/** Summarizer side requests, in order. */
	readonly sideRequests: readonly SdkRequest[];
	/** What extensions showed through the UI (empty with `ui: "none"`). */
	readonly ui: CapturedUi;
	root: string;
	cwd: string;
	sessionDir: string;
	/** Append replies to the script. */
	enqueue(...steps: FauxResponseStep[]): void;
	/** Replies not yet played. */
	pendingSteps(): number;
	/** Run a prompt (or an extension command such as "/context") and return the notifications it produced. */
	run(text: string): Promise<string[]>;
	/** End the session as a process exit would, keeping its files (for `resume`). */
	close(): Promise<void>;
	dispose(): Promise<void>;
}

/** A text reply. */
export function reply(text: string): FauxResponseStep {
	return fauxAssistantMessage(text);
}

/** One tool call with a fixed id (ids are part of the window, so tests never let them be random). */
export function toolCall(name: string, args: ToolCall["arguments"], id: string): ToolCall {
	return fauxToolCall(name, args, { id });
}

/** A reply that calls tools, optionally after some text; Pi runs the tools and asks the model again. */
export function callTools(calls: ToolCall[], text?: string): FauxResponseStep {
	return fauxAssistantMessage(text === undefined ? calls : [fauxText(text), ...calls], { stopReason: "toolUse" });
}

/** Build a session in temp directories with the faux model selected and the extensions bound. */
export async function createSdkHarness(options: SdkHarnessOptions = {}): Promise<SdkHarness> {
	const root = options.resume?.root ?? mkdtempSync(join(tmpdir(), "pi-fold-sdk-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "work");
	const sessionDir = join(root, "sessions");
	for (const dir of [agentDir, cwd, sessionDir]) mkdirSync(dir, { recursive: true });

	const requests: SdkRequest[] = [];
	const sideRequests: SdkRequest[] = [];
	const models = [{ id: FAUX_MODEL_ID, contextWindow: options.contextWindow ?? FAUX_CONTEXT_WINDOW }];
	const faux = createFauxCore({ provider: FAUX_PROVIDER_ID, models });
	// A second core answers side requests, so they never take a scripted agent reply.
	const side = createFauxCore({ provider: FAUX_PROVIDER_ID, models });
	const sideReply = options.sideReply ?? (() => reply(FAUX_SIDE_REPLY_TEXT));
	const isSide = (messages: readonly Message[]) =>
		messages.some(
			(message) => message.role === "system" && contentText(message.content).startsWith(SUMMARIZER_PROMPT_START),
		);
	const answerSide = (messages: Message[]): void => {
		const request = { messages: structuredClone(messages) };
		sideRequests.push(request);
		side.appendResponses([sideReply(request)]);
	};
	faux.setResponses(options.script ?? []);
	// Wrap the faux streams to record every request and to answer with the fallback once the script is used up.
	const record = (messages: Message[]): void => {
		requests.push({ messages: structuredClone(messages) });
		for (const defect of providerVisibleDefects(messages)) reportProblem(`SDK request ${requests.length}: ${defect}`);
		if (faux.getPendingResponseCount() === 0) faux.appendResponses([reply(FAUX_FALLBACK_TEXT)]);
	};
	const provider = createProvider({
		id: faux.provider,
		auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
		models: faux.models,
		api: {
			stream: (model, context, streamOptions) => {
				if (isSide(context.messages)) {
					answerSide(context.messages);
					return side.stream(model, context, streamOptions);
				}
				record(context.messages);
				return faux.stream(model, context, streamOptions);
			},
			streamSimple: (model, context, streamOptions) => {
				if (isSide(context.messages)) {
					answerSide(context.messages);
					return side.streamSimple(model, context, streamOptions);
				}
				record(context.messages);
				return faux.streamSimple(model, context, streamOptions);
			},
		},
	});
	// In-memory credential and catalog stores: a late background write cannot recreate files after dispose.
	const modelRuntime = await ModelRuntime.create({
		credentials: new InMemoryCredentialStore(),
		modelsStore: new InMemoryModelsStore(),
		modelsPath: null,
		refreshOnCreate: false,
	});
	modelRuntime.registerNativeProvider(provider);
	const model = faux.getModel();

	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, ...options.settings });
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		extensionFactories: options.extensions ?? [],
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	await resourceLoader.reload();
	const { session, extensionsResult } = await createAgentSession({
		cwd,
		agentDir,
		modelRuntime,
		model,
		thinkingLevel: "off",
		resourceLoader,
		settingsManager,
		sessionManager: resumedFile(options.resume, sessionDir, cwd, options.persist === true),
		...(options.tools ? { tools: options.tools } : {}),
	});
	if (extensionsResult.errors.length > 0) {
		session.dispose();
		const detail = extensionsResult.errors.map((e) => `${e.path}: ${e.error}`).join("\n");
		throw new Error(`extensions failed to load:\n${detail}`);
	}

	const ui = emptyCapture();
	const extensionErrors: string[] = [];
	const capture = (options.ui ?? "capture") === "capture";
	// Pi's headless modes hand extensions the host's global theme; the unbound context exposes it.
	initTheme();
	const hostTheme = session.extensionRunner.createContext().ui.theme;
	await session.bindExtensions({
		mode: capture ? "rpc" : "print",
		...(capture ? { uiContext: captureUiContext(ui, hostTheme) } : {}),
		commandContextActions: commandActions(session),
		onError: (error) => {
			extensionErrors.push(`${error.extensionPath}: ${error.error}`);
			reportProblem(`extension error (${error.event}): ${error.error}`);
		},
	});

	let closed = false;
	const close = async () => {
		if (closed) return;
		closed = true;
		await session.abort();
		session.dispose();
		await modelRuntime.settleCredentialWrites();
	};
	return {
		session,
		model,
		requests,
		sideRequests,
		ui,
		root,
		cwd,
		sessionDir,
		enqueue: (...steps) => faux.appendResponses(steps),
		pendingSteps: () => faux.getPendingResponseCount(),
		run: async (text) => {
			const before = ui.notifications.length;
			const errorsBefore = extensionErrors.length;
			await session.prompt(text);
			// An extension error would otherwise only surface as a missing effect.
			if (extensionErrors.length > errorsBefore) throw new Error(extensionErrors.slice(errorsBefore).join("\n"));
			return ui.notifications.slice(before).map((n) => n.message);
		},
		close,
		dispose: async () => {
			await close();
			rmSync(root, { recursive: true, force: true });
		},
	};
}

/** The session manager: the resumed harness's file reopened, a new file, or memory. */
function resumedFile(
	resume: SdkHarness | undefined,
	sessionDir: string,
	cwd: string,
	persist: boolean,
): SessionManager {
	const file = resume?.session.sessionManager.getSessionFile();
	if (resume && !file) throw new Error("SDK harness: resume needs a persisted session (persist: true)");
	if (file) return SessionManager.open(file, sessionDir);
	return persist ? SessionManager.create(cwd, sessionDir) : SessionManager.inMemory(cwd);
}

/** Command actions of a lone session: no runtime exists to replace it, so replacing actions fail loudly. */
function commandActions(session: AgentSession): ExtensionCommandContextActions {
	const unsupported = (action: string) => async (): Promise<never> => {
		throw new Error(`SDK harness: ${action} replaces the session; use the CLI harness for that`);
	};
	return {
		waitForIdle: () => session.waitForIdle(),
		newSession: unsupported("newSession"),
		fork: unsupported("fork"),
		switchSession: unsupported("switchSession"),
		navigateTree: async (targetId, navigateOptions) => {
			const result = await session.navigateTree(targetId, navigateOptions);
			return { cancelled: result.cancelled };
		},
		reload: () => session.reload(),
	};
}
