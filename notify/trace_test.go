package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/interludehq/interlude/notify"
	"github.com/interludehq/interlude/store"
)

func TestAWebhookDeliveryCarriesTheTraceOfItsDelivery(t *testing.T) {
	old := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(old) })

	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
	}))
	defer srv.Close()
	w, err := notify.NewWebhook(notify.WebhookConfig{URL: srv.URL, Secret: secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	ctx, span := tp.Tracer("test").Start(context.Background(), "deliver")
	defer span.End()
	n := &notify.Notification{Notice: store.Notice{ID: "ntc_1", ThreadID: "t", Graph: "g", Type: store.NoticeRaised, CreatedAt: time.Now()}}
	if err := w.Deliver(ctx, n); err != nil {
		t.Fatal(err)
	}
	header := <-got
	if want := span.SpanContext().TraceID().String(); !strings.Contains(header, want) {
		t.Fatalf("traceparent = %q, want the delivery's trace %s", header, want)
	}
}
