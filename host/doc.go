// Package host runs graphs for many threads over one store: it is what a
// program that embeds Interlude calls, with or without HTTP.
//
// A Host holds the graphs by name and the store they share, and runs each
// thread one run at a time: in this process by a lock per thread and, on a
// store several processes share (a store.Leaser such as Postgres), under the
// thread's lease (graph.Erased.Open), so that a thread started, continued or
// answered through the host never has two runs at once. Its hub (WithHub,
// Events) fans the runs' events out to listeners of a thread or of every
// thread, within bounds of memory, across processes through an event log
// (WithHubLog). It also keeps the
// threads moving when nobody calls: once started (Start), it closes questions
// whose time to live has passed (WithExpiryWatch, ExpireQuestions), finishes
// runs that stopped before their end (WithRecoveryWatch, RecoverThreads), and
// tells event listeners how the threads of runs that died with their process
// now read (WithLeaseWatch).
//
// Package server is an HTTP adapter over a Host; a program without HTTP runs
// one itself:
//
//	hub, _ := host.NewHub()
//	refund, _ := b.Compile(graph.WithName("refund"), graph.WithEvents(hub.Publish), graph.WithListeners(hub.Listening))
//	h, err := host.New(host.WithGraph(refund.Erase()), host.WithHub(hub))
//	h.Start(ctx)
//	defer h.Close()
//	sub, _ := hub.Subscribe(ctx, "thread-1", false, 0)
//	res, err := h.Invoke(ctx, "thread-1", "refund", graph.Input(in))
package host
