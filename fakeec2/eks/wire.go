package eks

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
)

// Service answers EKS's restJson1 API for the account's clusters.
type Service struct {
	host  account.Host
	model *Model
}

// New builds the service over host, loading the clusters host's store holds.
func New(host account.Host) (*Service, error) {
	m, err := newModel(host)
	if err != nil {
		return nil, err
	}
	return &Service{host: host, model: m}, nil
}

// Name is the SigV4 signing name.
func (s *Service) Name() string { return "eks" }

// SetCluster creates or replaces a cluster; it is durable when SetCluster returns.
func (s *Service) SetCluster(c Cluster) error { return s.model.Set(c) }

// RemoveCluster deletes a cluster; false when there was none.
func (s *Service) RemoveCluster(name string) (bool, error) { return s.model.Remove(name) }

// Cluster returns a copy of the named cluster as the model holds it.
func (s *Service) Cluster(name string) (*Cluster, bool) { return s.model.Get(name) }

// ClusterARN is the ARN EKS gives the named cluster.
func (s *Service) ClusterARN(name string) string { return s.model.ARN(name) }

// Serve routes a restJson1 call by method and path.
func (s *Service) Serve(c *account.Call) *account.Response {
	parts := strings.Split(strings.Trim(c.HTTP.URL.EscapedPath(), "/"), "/")
	switch {
	case c.HTTP.Method == http.MethodGet && len(parts) == 1 && parts[0] == "clusters":
		return s.answer(c, s.listClusters)
	case c.HTTP.Method == http.MethodGet && len(parts) == 2 && parts[0] == "clusters":
		name, err := url.PathUnescape(parts[1])
		if err != nil {
			return account.RESTError(c.RequestID, invalid("invalid cluster name %q", parts[1]))
		}
		return s.answer(c, func(c *account.Call) (int, any, *account.Error) { return s.describeCluster(c, name) })
	}
	c.Action = "Unknown"
	return account.RESTError(c.RequestID, account.Errorf(http.StatusNotFound, "UnknownOperationException",
		"No operation matches %s %s", c.HTTP.Method, c.HTTP.URL.Path))
}

func (s *Service) answer(c *account.Call, fn func(*account.Call) (int, any, *account.Error)) *account.Response {
	status, out, e := fn(c)
	if e != nil {
		return account.RESTError(c.RequestID, e)
	}
	return account.RESTJSON(status, c.RequestID, out)
}

func invalid(format string, args ...any) *account.Error {
	return account.BadRequest("InvalidParameterException", format, args...)
}

// authorize checks the policy; a denial answers EKS's 403 AccessDeniedException.
func (s *Service) authorize(c *account.Call, resource string) *account.Error {
	action := "eks:" + c.Action
	if reason := s.host.Authorize(c.Caller, action, resource); reason != "" {
		c.DenialReason = reason
		return account.Errorf(http.StatusForbidden, "AccessDeniedException", "%s",
			account.NotAuthorizedMessage(s.host, c.Caller, action, resource))
	}
	return nil
}

type listClustersOut struct {
	Clusters  []string `json:"clusters"`
	NextToken *string  `json:"nextToken,omitempty"`
}

func (s *Service) listClusters(c *account.Call) (int, any, *account.Error) {
	q := c.HTTP.URL.Query()
	c.Action, c.ReadOnly, c.Params = "ListClusters", true, account.FlattenForm(q)
	if e := s.authorize(c, "*"); e != nil {
		return 0, nil, e
	}
	max := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, nil, invalid("maxResults must be an integer between 1 and 100, got %q", v)
		}
		max = n
	}
	for _, inc := range q["include"] {
		if inc != "all" {
			return 0, nil, invalid("include must be 'all', got %q", inc)
		}
	}
	page, next, err := account.Page(s.model.Names(), func(n string) string { return n }, q.Get("nextToken"), max)
	if err != nil {
		return 0, nil, invalid("The nextToken provided is invalid: %v", err)
	}
	out := listClustersOut{Clusters: page}
	if next != "" {
		out.NextToken = &next
	}
	return http.StatusOK, out, nil
}

func (s *Service) describeCluster(c *account.Call, name string) (int, any, *account.Error) {
	c.Action, c.ReadOnly, c.Params = "DescribeCluster", true, map[string]string{"name": name}
	if e := s.authorize(c, s.model.ARN(name)); e != nil {
		return 0, nil, e
	}
	cl, ok := s.model.Get(name)
	if !ok {
		return 0, nil, account.Errorf(http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: %s.", name)
	}
	return http.StatusOK, struct {
		Cluster *clusterOut `json:"cluster"`
	}{s.encode(cl)}, nil
}
