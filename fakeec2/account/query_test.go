package account_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
)

type echoIn struct{ Name string }
type echoOut struct{ Name string }

func echoService(versionOptional bool, invalid func(action, version string) *account.Error) account.QueryService {
	dec := func(f url.Values) (*echoIn, *account.Error) {
		if f.Get("Name") == "bad" {
			return nil, account.BadRequest("ValidationError", "bad name")
		}
		return &echoIn{Name: f.Get("Name")}, nil
	}
	run := func(_ *account.Call, in *echoIn) (*echoOut, *account.Error) {
		if in.Name == "missing" {
			return nil, account.Errorf(404, "NoSuchEntity", "no %s", in.Name)
		}
		return &echoOut{Name: in.Name}, nil
	}
	enc := func(o *echoOut) any {
		return struct {
			Name string `xml:"Name"`
		}{o.Name}
	}
	return account.QueryService{Namespace: "https://echo.example/doc/2020-01-01/", Version: "2020-01-01",
		Actions: map[string]account.QueryActionSpec{
			"Echo":  {Handler: account.QueryAction(dec, run, enc), ReadOnly: true},
			"Touch": {Handler: func(*account.Call, url.Values) (any, *account.Error) { return nil, nil }},
		},
		VersionOptional: versionOptional, InvalidAction: invalid}
}

func TestServeQuery(t *testing.T) {
	sqsStyle := func(action, _ string) *account.Error {
		return account.BadRequest("InvalidAction", "The action %s is not valid for this endpoint.", action)
	}
	type want struct {
		Status   int
		Code     string
		Message  string
		Action   string
		Params   map[string]string
		ReadOnly bool
		Body     string // a fragment the body must hold
	}
	tests := []struct {
		name            string
		url, body       string
		versionOptional bool
		invalid         func(action, version string) *account.Error
		want            want
	}{
		{name: "typed action", body: "Action=Echo&Version=2020-01-01&Name=lab",
			want: want{Status: 200, Action: "Echo", Params: map[string]string{"Name": "lab"}, ReadOnly: true,
				Body: `<EchoResponse xmlns="https://echo.example/doc/2020-01-01/"><EchoResult><Name>lab</Name></EchoResult>`}},
		{name: "no result", body: "Action=Touch&Version=2020-01-01",
			want: want{Status: 200, Action: "Touch", Params: map[string]string{}, Body: "<TouchResponse"}},
		{name: "form in the URL", url: "/?Action=Echo&Version=2020-01-01&Name=url", body: "Name=body",
			want: want{Status: 200, Action: "Echo", Params: map[string]string{"Name": "body"}, ReadOnly: true, Body: "<Name>body</Name>"}},
		{name: "malformed form", body: "Action=Echo&%zz",
			want: want{Status: 400, Code: "MalformedQueryString", Body: "<Code>MalformedQueryString</Code>"}},
		{name: "missing action", body: "Version=2020-01-01",
			want: want{Status: 400, Code: "MissingAction", Message: "Missing Action", Params: map[string]string{}}},
		{name: "unknown action", body: "Action=Nope&Version=2020-01-01",
			want: want{Status: 400, Code: "InvalidAction", Message: "Could not find operation Nope for version 2020-01-01",
				Action: "Nope", Params: map[string]string{}}},
		{name: "wrong version", body: "Action=Echo&Version=2019-01-01",
			want: want{Status: 400, Code: "InvalidAction", Message: "Could not find operation Echo for version 2019-01-01",
				Action: "Echo", Params: map[string]string{}}},
		{name: "version required", body: "Action=Echo",
			want: want{Status: 400, Code: "InvalidAction", Message: "Could not find operation Echo for version ",
				Action: "Echo", Params: map[string]string{}}},
		{name: "version optional", body: "Action=Echo&Name=x", versionOptional: true,
			want: want{Status: 200, Action: "Echo", Params: map[string]string{"Name": "x"}, ReadOnly: true}},
		{name: "optional version must still match", body: "Action=Echo&Version=1", versionOptional: true, invalid: sqsStyle,
			want: want{Status: 400, Code: "InvalidAction", Message: "The action Echo is not valid for this endpoint.",
				Action: "Echo", Params: map[string]string{}}},
		{name: "decode error", body: "Action=Echo&Version=2020-01-01&Name=bad",
			want: want{Status: 400, Code: "ValidationError", Message: "bad name", Action: "Echo",
				Params: map[string]string{"Name": "bad"}, ReadOnly: true}},
		{name: "action error", body: "Action=Echo&Version=2020-01-01&Name=missing",
			want: want{Status: 404, Code: "NoSuchEntity", Message: "no missing", Action: "Echo",
				Params: map[string]string{"Name": "missing"}, ReadOnly: true, Body: "<Code>NoSuchEntity</Code>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.url
			if target == "" {
				target = "/"
			}
			c := &account.Call{RequestID: "req-1", HTTP: httptest.NewRequest("POST", target, nil), Body: []byte(tt.body)}
			resp := account.ServeQuery(c, echoService(tt.versionOptional, tt.invalid))
			got := want{Status: resp.Status, Action: c.Action, Params: c.Params, ReadOnly: c.ReadOnly, Body: tt.want.Body}
			if resp.Err != nil {
				got.Code, got.Message = resp.Err.Code, resp.Err.Message
			}
			if tt.want.Code == "MalformedQueryString" {
				got.Message = "" // Go's parse error, not ours
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if !strings.Contains(string(resp.Body), tt.want.Body) {
				t.Errorf("body %s lacks %s", resp.Body, tt.want.Body)
			}
		})
	}
}
