package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

// slowBlock decodes data as Block.UnmarshalJSON does when its direct
// decoder declines, for comparison.
func slowBlock(data []byte) (Block, error) {
	var b Block
	type plain Block
	var aux struct {
		plain
		Content json.RawMessage `json:"content,omitempty"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return b, err
	}
	b = Block(aux.plain)
	if c := aux.Content; len(c) > 0 && string(c) != "null" {
		if c[0] == '"' {
			var s string
			err := json.Unmarshal(c, &s)
			return Block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input, ToolUseID: b.ToolUseID,
				Content: []Block{TextBlock(s)}, IsError: b.IsError, Interrupts: b.Interrupts, Source: b.Source,
				Thinking: b.Thinking, Signature: b.Signature, Data: b.Data}, err
		}
		var blocks []Block
		if err := json.Unmarshal(c, &blocks); err != nil {
			return b, err
		}
		b.Content = blocks
	}
	return b, nil
}

var blockDecodeCases = []string{
	`{"type":"tool_result","tool_use_id":"call_0_2","content":[{"type":"text","text":"refunded 10 on 1"}],"interrupts":[{"q":1}]}`,
	`{"type":"tool_use","id":"c","name":"lookup","input":{"order_id":"1","n":[1,2.5e3,null,true]}}`,
	`{"type":"tool_result","tool_use_id":"x","content":"plain text","is_error":true}`,
	`{"type":"tool_result","content":[],"is_error":false}`,
	`{"type":"tool_result","content":null,"is_error":null}`,
	`{"type":"text","text":null}`,
	`{"type":"text","text":"a","text":"b"}`,
	`{"type":"tool_result","content":[{"type":"text","text":"a"}],"content":"b"}`,
	`{"type":"thinking","thinking":"hm","signature":"sig"}`,
	`{"type":"redacted_thinking","data":"ZZ"}`,
	`{}`,
	`{"type":"text","text":"héllo ☃"}`,
	`{"type":"text","text":"esc\"aped"}`,
	`{"type":"text","text":"\u003c"}`,
	`{"type":"text","text":"q\"\\\/\b\f\n\r\t\u00e9\u2028\u0000x"}`,
	`{"type":"text","text":"\ud83d\ude00 \ud800 \uDFFF"}`,
	`{"type":"text","text":"\x"}`,
	`{"type":"text","text":"\u12"}`,
	`{"type":"tool_result","content":[{"type":"text","text":"{\"order_id\":\"1\",\"total\":150}"}]}`,
	`{"Type":"text","TEXT":"case"}`,
	`{"type":"text","unknown":1}`,
	`{"type":"tool_use","input":null}`,
	`{"type":"tool_use","input":{"a":"<b>"}}`,
	`{"type": "text"}`,
	`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}`,
	`{"type":"tool_result","content":[null]}`,
	`{"type":"tool_result","content":[{"type":"tool_result","content":[{"type":"text","text":"deep"}]}]}`,
	`{"type":5}`,
	`{"is_error":"yes"}`,
	"{\"type\":\"text\",\"text\":\"bad \xff utf8\"}",
}

func TestBlockDecodesAsEncodingJSONDoes(t *testing.T) {
	for _, c := range blockDecodeCases {
		var got Block
		gotErr := json.Unmarshal([]byte(c), &got)
		want, wantErr := slowBlock([]byte(c))
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s:\n got %#v, %v\nwant %#v, %v", c, got, gotErr, want, wantErr)
		}
	}
}

func FuzzBlockDecodesAsEncodingJSONDoes(f *testing.F) {
	for _, c := range blockDecodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Block
		gotErr := json.Unmarshal(data, &got)
		want, wantErr := slowBlock(data)
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q:\n got %#v, %v\nwant %#v, %v", data, got, gotErr, want, wantErr)
		}
	})
}
