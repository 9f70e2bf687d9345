package heraldwebhooks

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

type schema struct {
	Ref        string            `json:"$ref"`
	Properties map[string]schema `json:"properties"`
	Required   []string          `json:"required"`
	Items      *schema           `json:"items"`
}

// The structs DecodeData returns hold exactly the fields the OpenAPI document declares for each
// type's data, with omitempty on those it does not require.
func TestDataStructsMatchTheDocument(t *testing.T) {
	raw, err := os.ReadFile("../../../openapi/openapi.json")
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	var doc struct {
		Webhooks map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema schema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"webhooks"`
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	byRef := func(ref string) schema { return doc.Components.Schemas[ref[strings.LastIndex(ref, "/")+1:]] }
	// 19 published types and 4 operational ones (ADR 20).
	if len(doc.Webhooks) != 23 {
		t.Fatalf("%d event types in the document, want 23", len(doc.Webhooks))
	}
	for eventType, hook := range doc.Webhooks {
		envelope := byRef(hook.Post.RequestBody.Content["application/json"].Schema.Ref)
		data := byRef(envelope.Properties["data"].Ref)
		decoded, err := (&Envelope{Type: eventType, Data: json.RawMessage(`{}`)}).DecodeData()
		if err != nil {
			t.Fatalf("%s: %v", eventType, err)
		}
		checkFields(t, eventType, reflect.TypeOf(decoded).Elem(), data)
		if records, ok := data.Properties["dns_records"]; ok {
			checkFields(t, eventType+" dns_records", reflect.TypeOf(DnsRecord{}), *records.Items)
		}
	}
}

func checkFields(t *testing.T, where string, typ reflect.Type, s schema) {
	t.Helper()
	var fields, optional, wantFields, wantOptional []string
	for i := 0; i < typ.NumField(); i++ {
		name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
		if opts == "omitempty" {
			optional = append(optional, name)
		}
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for name := range s.Properties {
		wantFields = append(wantFields, name)
		if !required[name] {
			wantOptional = append(wantOptional, name)
		}
	}
	for _, l := range [][]string{fields, optional, wantFields, wantOptional} {
		sort.Strings(l)
	}
	if !reflect.DeepEqual(fields, wantFields) || !reflect.DeepEqual(optional, wantOptional) {
		t.Errorf("%s: %s has fields %v (optional %v); the document says %v (optional %v)",
			where, typ.Name(), fields, optional, wantFields, wantOptional)
	}
}

func TestDecodeData(t *testing.T) {
	env := &Envelope{
		Type: EventDomainSendingPaused,
		Data: json.RawMessage(`{"domain_id":"6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10","domain":"mail.example.com",` +
			`"status":"sending_paused","dns_records":[{"type":"TXT","name":"example.com","value":"v=spf1","valid":false}]}`),
	}
	decoded, err := env.DecodeData()
	if err != nil {
		t.Fatal(err)
	}
	data, ok := decoded.(*DomainSendingPausedData)
	if !ok {
		t.Fatalf("DecodeData gave a %T", decoded)
	}
	if data.Domain != "mail.example.com" || data.Status != "sending_paused" || len(data.DNSRecords) != 1 ||
		data.DNSRecords[0].Valid == nil || *data.DNSRecords[0].Valid || data.Reason != nil {
		t.Fatalf("decoded %+v", data)
	}
	if _, err := (&Envelope{Type: "message.teleported", Data: json.RawMessage(`{}`)}).DecodeData(); err == nil {
		t.Fatal("an unknown type decoded")
	}
	if _, err := (&Envelope{Type: EventMessageSent, Data: json.RawMessage(`[]`)}).DecodeData(); err == nil {
		t.Fatal("an array decoded as data")
	}
}
