package labs

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/karplab/karplab/cluster"
)

// The course's manifests name the course's account: eu-west-2, its three zones, and the
// discovery tag and node role ziba-production. In a lab whose account is another (karplab
// start --region us-east-1 --cluster-name prod-use1), staging and solutions name that
// account's instead, as a learner there would write them: its zones, its region and its
// discovery tag and KarpenterNodeRole-NAME.

var courseZoneList = regexp.MustCompile(`\[\s*"eu-west-2a",\s*"eu-west-2b",\s*"eu-west-2c"\s*\]`)

// forAccount rewrites a course manifest for acct; the course's account gets it unchanged.
func forAccount(manifest []byte, acct cluster.Account) []byte {
	course := cluster.DefaultAccount()
	if acct.Region == course.Region && acct.DiscoveryTag == course.DiscoveryTag && strings.Join(acct.Zones, ",") == strings.Join(course.Zones, ",") {
		return manifest
	}
	quoted := make([]string, len(acct.Zones))
	for i, z := range acct.Zones {
		quoted[i] = strconv.Quote(z)
	}
	s := courseZoneList.ReplaceAllLiteralString(string(manifest), "["+strings.Join(quoted, ", ")+"]")
	s = strings.ReplaceAll(s, course.Region, acct.Region)
	s = strings.ReplaceAll(s, course.DiscoveryTag, acct.DiscoveryTag)
	return []byte(s)
}
