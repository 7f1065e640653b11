// The refund graph of bench/peers/langgraph (hitl_cycle) as a LangGraph
// dev-server graph: one node that asks interrupt({amount, message}) and, on
// resume with {approved: true}, ends with outcome "refunded".
import { Annotation, StateGraph, START, END, interrupt } from "@langchain/langgraph";

const State = Annotation.Root({
  amount: Annotation(),
  outcome: Annotation(),
});

export const graph = new StateGraph(State)
  .addNode("refund", (s) => {
    const answer = interrupt({ amount: s.amount, message: `Approve a refund of $${s.amount}?` });
    return { outcome: answer && answer.approved ? "refunded" : "declined" };
  })
  .addEdge(START, "refund")
  .addEdge("refund", END)
  .compile();
