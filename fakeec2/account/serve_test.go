package account

import "testing"

func TestCredentialScope(t *testing.T) {
	tests := []struct {
		name, header, caller, service string
	}{
		{name: "ec2", header: "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261102/eu-west-2/ec2/aws4_request, SignedHeaders=host, Signature=abc",
			caller: "AKIAEXAMPLE", service: "ec2"},
		{name: "ssm", header: "AWS4-HMAC-SHA256 Credential=lab/20261202/eu-west-2/ssm/aws4_request, SignedHeaders=host;x-amz-date, Signature=0f",
			caller: "lab", service: "ssm"},
		{name: "iam signs for us-east-1", header: "AWS4-HMAC-SHA256 Credential=k/20261202/us-east-1/iam/aws4_request,SignedHeaders=host,Signature=1",
			caller: "k", service: "iam"},
		{name: "no header", header: "", caller: "anonymous", service: ""},
		{name: "empty key", header: "AWS4-HMAC-SHA256 Credential=/x", caller: "anonymous", service: ""},
		{name: "truncated scope", header: "AWS4-HMAC-SHA256 Credential=k/20261202/eu-west-2/sqs", caller: "k", service: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CallerFromAuth(tt.header); got != tt.caller {
				t.Errorf("CallerFromAuth = %q, want %q", got, tt.caller)
			}
			if got := ServiceFromAuth(tt.header); got != tt.service {
				t.Errorf("ServiceFromAuth = %q, want %q", got, tt.service)
			}
		})
	}
}
