/** The worker side of `process.ts`: runs one `pi-fold` command and posts its result to the main thread. */

import { parentPort, workerData } from "node:worker_threads";
import { runCli } from "./main.ts";

const { argv } = workerData as { argv: string[] };
parentPort?.postMessage(await runCli(argv));
