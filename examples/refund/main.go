// Command refund runs the refund graph (examples/graphs.Refund) on a SQLite file
// and asks its question in the terminal.
//
//	go run ./examples/refund [-db refund.db] [-thread ID] [-amount 150]
//
// The graph's one node asks "Approve a refund of $150?". The pause is committed to
// the file before the question is shown, so the program can stop at the question
// (Ctrl-D, or a crash) and nothing is lost: running it again with the same -thread
// finds the pending question and asks it again instead of starting a new refund.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/examples/graphs"
	"github.com/interludehq/interlude/graph"
	"github.com/interludehq/interlude/internal/termform"
	"github.com/interludehq/interlude/store/sqlite"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "refund:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("refund", flag.ContinueOnError)
	fs.SetOutput(out)
	db := fs.String("db", "refund.db", "the SQLite `file` that keeps the threads")
	thread := fs.String("thread", "", "the thread `id`; a new one is made when empty")
	amount := fs.Float64("amount", 150, "the refund `amount` in dollars, for a new thread")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	st, err := sqlite.Open(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	g, err := graphs.Refund(graph.WithStore(st))
	if err != nil {
		return err
	}

	id := *thread
	if id == "" {
		id = newID()
	}
	res, err := startOrPickUp(ctx, g, id, *amount, out)
	if err != nil || res == nil {
		return err
	}

	ask := termform.New(in, out)
	for res.Status == interlude.RunInterrupted && len(res.Interrupts) > 0 {
		answers := map[string]interlude.Resolution{}
		for _, q := range res.Interrupts {
			r, err := ask.Ask(q)
			if errors.Is(err, io.EOF) {
				fmt.Fprintf(out, "\nThe question stays open in %s. To answer it, run:\n  go run ./examples/refund -db %s -thread %s\n", *db, *db, id)
				return nil
			}
			if err != nil {
				return err
			}
			answers[q.ID] = r
		}
		if res, err = g.Invoke(ctx, id, graph.Respond(answers)); err != nil {
			return err
		}
	}
	report(out, id, string(res.Status), res.Values, res.Error)
	return nil
}

// startOrPickUp starts the thread, or picks up the question it is waiting on. It
// returns nil when there is nothing left to do.
func startOrPickUp(ctx context.Context, g *graph.Graph[graphs.RefundState], id string, amount float64, out io.Writer) (*graph.Result[graphs.RefundState], error) {
	snap, err := g.State(ctx, id)
	switch {
	case errors.Is(err, interlude.ErrNotFound):
		fmt.Fprintf(out, "Thread %s: asking for a refund of %s.\n", id, graphs.Dollars(amount))
		return g.Invoke(ctx, id, graph.Input(graphs.RefundState{Amount: amount}))
	case err != nil:
		return nil, err
	case snap.Status == interlude.ThreadInterrupted:
		fmt.Fprintf(out, "Thread %s is waiting for an answer (asked %s).\n", id, snap.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
		return &graph.Result[graphs.RefundState]{ThreadID: id, Status: interlude.RunInterrupted, Values: snap.Values, Interrupts: snap.Interrupts}, nil
	}
	fmt.Fprintf(out, "Thread %s has already finished.\n", id)
	report(out, id, string(snap.Status), snap.Values, snap.Error)
	return nil, nil
}

func report(out io.Writer, id, status string, v graphs.RefundState, failure string) {
	switch {
	case failure != "":
		fmt.Fprintf(out, "Thread %s failed: %s\n", id, failure)
	case v.Outcome != "":
		fmt.Fprintf(out, "Outcome: %s (the refund node started %d times).\n", v.Outcome, v.Attempts)
	default:
		fmt.Fprintf(out, "Thread %s is %s.\n", id, status)
	}
}

func newID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "refund-" + hex.EncodeToString(b)
}
