package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/interludehq/interlude"
	"github.com/interludehq/interlude/tool"
)

type refundArgs struct {
	OrderID string  `json:"order_id" jsonschema:"description=The order to refund"`
	Amount  float64 `json:"amount" jsonschema:"minimum=0"`
}

func TestFuncSchemaComesFromTheInputType(t *testing.T) {
	tl := tool.Func("issue_refund", "Refund an order", func(ctx context.Context, in refundArgs) (string, error) { return "ok", nil })
	var s map[string]any
	if err := json.Unmarshal(tl.InputSchema(), &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	if s["type"] != "object" || props["order_id"] == nil || props["amount"].(map[string]any)["minimum"] != 0.0 {
		t.Fatalf("schema = %s", tl.InputSchema())
	}
}

func TestRunTurnsFailuresIntoErrorResults(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		fn      func(ctx context.Context, in refundArgs) (any, error)
		args    string
		want    string
		isError bool
	}{
		{"success as JSON", func(ctx context.Context, in refundArgs) (any, error) {
			return map[string]any{"refunded": in.Amount}, nil
		}, `{"order_id":"1","amount":5}`, `{"refunded":5}`, false},
		{"invalid arguments", func(ctx context.Context, in refundArgs) (any, error) {
			t.Fatal("ran on invalid arguments")
			return nil, nil
		}, `{"order_id":"1","amount":-1}`, "/amount", true},
		{"missing argument", func(ctx context.Context, in refundArgs) (any, error) {
			t.Fatal("ran on invalid arguments")
			return nil, nil
		}, `{"amount":1}`, "order_id", true},
		{"returned error", func(ctx context.Context, in refundArgs) (any, error) { return nil, errors.New("bank down") }, `{"order_id":"1","amount":1}`, "bank down", true},
		{"panic", func(ctx context.Context, in refundArgs) (any, error) { panic("boom") }, `{"order_id":"1","amount":1}`, "panic: boom", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := tool.Func("issue_refund", "", c.fn)
			res, err := tool.Run(ctx, tl, json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != c.isError || !strings.Contains(res.Content, c.want) {
				t.Fatalf("result = %+v, want content containing %q (error %v)", res, c.want, c.isError)
			}
		})
	}
}

func TestRunPassesPausesThrough(t *testing.T) {
	tl := tool.Func("ask", "", func(ctx context.Context, in struct{}) (string, error) {
		return "", &interlude.PausedError{}
	})
	if _, err := tool.Run(context.Background(), tl, nil); !errors.Is(err, interlude.ErrPaused) {
		t.Fatalf("err = %v, want the pause", err)
	}
}

func TestRunCheckedRunsValidArgumentsAndRefusesTheViolationsItIsGiven(t *testing.T) {
	calls := 0
	tl := tool.Func("add", "Adds", func(ctx context.Context, in struct {
		A int `json:"a"`
	}) (string, error) {
		calls++
		return "ok", nil
	})
	args := json.RawMessage(`{"a":"x"}`)
	vs, err := tool.Validate(tl, args)
	if err != nil || len(vs) == 0 {
		t.Fatalf("%v %v", vs, err)
	}
	res, err := tool.RunChecked(context.Background(), tl, args, vs)
	if err != nil || !res.IsError || !strings.Contains(res.Content, vs[0].Message) || calls != 0 {
		t.Fatalf("invalid arguments gave %+v %v after %d calls; want their violations, the tool not called", res, err, calls)
	}
	res, err = tool.RunChecked(context.Background(), tl, json.RawMessage(`{"a":1}`), nil)
	if err != nil || res.IsError || res.Content != "ok" || calls != 1 {
		t.Fatalf("valid arguments gave %+v %v after %d calls", res, err, calls)
	}
}
