package server

import "testing"

// BenchmarkParseInvoke decodes the bodies of the invoke path: a new thread's
// input, an answer to one question, and a batch of answers.
func BenchmarkParseInvoke(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"input", `{"graph":"refund","input":{"amount":150,"reason":"broken on arrival","customer":"c-42"},"config":{"thread_id":"order-42"}}`},
		{"resume", `{"resume":{"approved":true,"note":"ok"},"config":{"thread_id":"order-42"},"response_granularity":"low"}`},
		{"responses", `{"responses":[{"interrupt_id":"int_1","status":"resolved","response":{"approved":true}},{"interrupt_id":"int_2","status":"rejected","error":{"name":"policy","message":"over the limit"}},{"interrupt_id":"int_3","status":"cancelled"}],"config":{"thread_id":"order-42"}}`},
	} {
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseInvoke(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
