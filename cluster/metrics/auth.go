package metrics

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	authgroup "k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
)

// auth is what an aggregated API server does with a proxied request: authenticate the
// front proxy (the kube-apiserver's client certificate, signed by the request-header CA
// and named in requestheader-allowed-names), take the user from its X-Remote-* headers,
// and ask the API server whether that user may do this (SubjectAccessReview), as
// metrics-server's delegated authentication and authorization do.
type auth struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	info  genericrequest.RequestInfoFactory
}

// requestHeaderConfigMap is where the kube-apiserver publishes its front-proxy settings for
// extension API servers.
const requestHeaderConfigMap = "extension-apiserver-authentication"

func (s *Server) newAuth(ctx context.Context) (*auth, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, requestHeaderConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("metrics: reading kube-system/%s: %w", requestHeaderConfigMap, err)
	}
	caPEM := cm.Data["requestheader-client-ca-file"]
	if caPEM == "" {
		return nil, fmt.Errorf("metrics: kube-system/%s has no requestheader-client-ca-file: the API server runs without --requestheader-client-ca-file, so it cannot proxy to an aggregated API", requestHeaderConfigMap)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(caPEM)) {
		return nil, errors.New("metrics: the request-header CA holds no certificate")
	}
	list := func(key string) headerrequest.StaticStringSlice {
		var v []string
		_ = json.Unmarshal([]byte(cm.Data[key]), &v)
		return v
	}
	verify := func() (x509.VerifyOptions, bool) {
		return x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, true
	}
	// Every authenticated user is in system:authenticated, as the generic API server adds:
	// RBAC's system:discovery and system:public-info-viewer bind that group.
	authn := authgroup.NewAuthenticatedGroupAdder(headerrequest.NewDynamicVerifyOptionsSecure(x509request.VerifyOptionFunc(verify),
		list("requestheader-allowed-names"), list("requestheader-username-headers"), list("requestheader-uid-headers"),
		list("requestheader-group-headers"), list("requestheader-extra-headers-prefix")))
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: s.kube.AuthorizationV1(),
		AllowCacheTTL:             10 * time.Second,
		DenyCacheTTL:              5 * time.Second,
		WebhookRetryBackoff:       &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Steps: 5},
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics: building the delegating authorizer: %w", err)
	}
	return &auth{authn: authn, authz: authz, info: genericrequest.RequestInfoFactory{
		APIPrefixes: sets.NewString("apis", "api"), GrouplessAPIPrefixes: sets.NewString("api"),
	}}, nil
}

// alwaysAllowed are served to anyone who reaches the loopback port, as the generic API
// server's health checks are.
func alwaysAllowed(path string) bool {
	switch strings.TrimSuffix(path, "/") {
	case "/healthz", "/livez", "/readyz":
		return true
	}
	return false
}

func (a *auth) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if alwaysAllowed(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		resp, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			responsewriters.ErrorNegotiated(apierrors.NewUnauthorized("Unauthorized"), codecs, metav1.SchemeGroupVersion, w, r)
			return
		}
		info, err := a.info.NewRequestInfo(r)
		if err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewBadRequest(err.Error()), codecs, metav1.SchemeGroupVersion, w, r)
			return
		}
		attrs := authorizer.AttributesRecord{
			User: resp.User, Verb: info.Verb, Namespace: info.Namespace, APIGroup: info.APIGroup,
			APIVersion: info.APIVersion, Resource: info.Resource, Subresource: info.Subresource,
			Name: info.Name, ResourceRequest: info.IsResourceRequest, Path: info.Path,
		}
		decision, reason, err := a.authz.Authorize(r.Context(), attrs)
		if decision != authorizer.DecisionAllow {
			if err != nil {
				reason = err.Error()
			}
			responsewriters.Forbidden(attrs, w, r, reason, codecs)
			return
		}
		ctx := genericrequest.WithUser(genericrequest.WithRequestInfo(r.Context(), info), resp.User)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
