package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// AWSSide is a bundle's aws/*.json, decoded into the EC2 API's own types; a file the bundle
// lacks leaves its list empty.
type AWSSide struct {
	Instances      []ec2types.Instance
	Subnets        []ec2types.Subnet
	SecurityGroups []ec2types.SecurityGroup
	Images         []ec2types.Image
}

// readAWSSide reads what the bundle has of aws/, each file within the limit.
func readAWSSide(dir string, lim Limits) (AWSSide, error) {
	var side AWSSide
	var instances struct{ Reservations []ec2types.Reservation }
	var subnets struct{ Subnets []ec2types.Subnet }
	var groups struct{ SecurityGroups []ec2types.SecurityGroup }
	var images struct{ Images []ec2types.Image }
	for name, into := range map[string]any{InstancesFile: &instances, SubnetsFile: &subnets, SecurityGroupsFile: &groups, ImagesFile: &images} {
		b, err := readLimited(filepath.Join(dir, AWSDir, name), lim.File)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return side, err
		}
		if err := json.Unmarshal(b, into); err != nil {
			return side, &BundleError{AWSDir + "/" + name, fmt.Errorf("not the aws CLI's JSON of its call: %w", err)}
		}
	}
	for _, r := range instances.Reservations {
		side.Instances = append(side.Instances, r.Instances...)
	}
	side.Subnets, side.SecurityGroups, side.Images = subnets.Subnets, groups.SecurityGroups, images.Images
	return side, nil
}
