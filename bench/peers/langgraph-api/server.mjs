// Starts LangGraph's dev server (@langchain/langgraph-api, in memory, as
// `langgraph dev` runs it) hosting refund.mjs on 127.0.0.1:--port.
import { startServer } from "@langchain/langgraph-api/server";

const i = process.argv.indexOf("--port");
const port = i > 0 ? Number(process.argv[i + 1]) : 2024;
await startServer({
  port,
  nWorkers: 10,
  host: "127.0.0.1",
  cwd: process.cwd(),
  graphs: { refund: "./refund.mjs:graph" },
});
