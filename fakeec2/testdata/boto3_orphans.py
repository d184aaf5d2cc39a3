"""The orphaned-storage sweep through boto3: waiters, paginators and error codes as a
Python investigator meets them. Prints one JSON object of findings for boto3_test.go."""
import json
import os

import boto3
from botocore.exceptions import ClientError

ec2 = boto3.client("ec2", endpoint_url=os.environ["EC2_URL"], region_name="eu-west-2",
                   aws_access_key_id="AKIABOTO3INVESTIGATE", aws_secret_access_key="lab")
fast = {"Delay": 1, "MaxAttempts": 40}
owned = {"Key": "kubernetes.io/cluster/karplab", "Value": "owned"}
by_owner = [{"Name": "tag:kubernetes.io/cluster/karplab", "Values": ["owned"]}]
out = {}


def code(call, **kw):
    try:
        call(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


def ids(paginator, key, field, **kw):
    pages = ec2.get_paginator(paginator).paginate(**kw)
    return sorted(item[field] for page in pages for item in page[key])


image = ec2.describe_images(Owners=["amazon"], Filters=[{"Name": "architecture", "Values": ["x86_64"]}])["Images"][0]
run = ec2.run_instances(ImageId=image["ImageId"], InstanceType="m6i.large", MinCount=1, MaxCount=1,
                        Placement={"AvailabilityZone": "eu-west-2a"},
                        TagSpecifications=[{"ResourceType": "instance", "Tags": [owned]},
                                           {"ResourceType": "volume", "Tags": [owned]}])
inst = run["Instances"][0]
iid, subnet = inst["InstanceId"], inst["SubnetId"]
ec2.get_waiter("instance_running").wait(InstanceIds=[iid], WaiterConfig=fast)

vid = ec2.create_volume(AvailabilityZone="eu-west-2a", Size=20, VolumeType="gp3",
                        TagSpecifications=[{"ResourceType": "volume", "Tags": [owned]}])["VolumeId"]
ec2.get_waiter("volume_available").wait(VolumeIds=[vid], WaiterConfig=fast)
ec2.attach_volume(VolumeId=vid, InstanceId=iid, Device="/dev/sdf")
ec2.get_waiter("volume_in_use").wait(VolumeIds=[vid], WaiterConfig=fast)
out["delete_in_use"] = code(ec2.delete_volume, VolumeId=vid)
elsewhere = ec2.create_volume(AvailabilityZone="eu-west-2b", Size=1)["VolumeId"]
ec2.get_waiter("volume_available").wait(VolumeIds=[elsewhere], WaiterConfig=fast)
out["attach_other_zone"] = code(ec2.attach_volume, VolumeId=elsewhere, InstanceId=iid, Device="/dev/sdg")

sid = ec2.create_snapshot(VolumeId=vid, TagSpecifications=[{"ResourceType": "snapshot", "Tags": [owned]}])["SnapshotId"]
ec2.get_waiter("snapshot_completed").wait(SnapshotIds=[sid], WaiterConfig=fast)
out["in_use"] = ids("describe_volumes", "Volumes", "VolumeId",
                    Filters=by_owner + [{"Name": "status", "Values": ["in-use"]}])
out["snapshots"] = ids("describe_snapshots", "Snapshots", "SnapshotId", OwnerIds=["self"], Filters=by_owner)

ec2.detach_volume(VolumeId=vid)
ec2.get_waiter("volume_available").wait(VolumeIds=[vid], WaiterConfig=fast)
out["available"] = ids("describe_volumes", "Volumes", "VolumeId",
                       Filters=by_owner + [{"Name": "status", "Values": ["available"]}])

eni = ec2.create_network_interface(SubnetId=subnet, TagSpecifications=[{"ResourceType": "network-interface", "Tags": [
    {"Key": "cluster.k8s.amazonaws.com/name", "Value": "karplab"}]}])["NetworkInterface"]
att = ec2.attach_network_interface(NetworkInterfaceId=eni["NetworkInterfaceId"], InstanceId=iid, DeviceIndex=1)
out["delete_eni_in_use"] = code(ec2.delete_network_interface, NetworkInterfaceId=eni["NetworkInterfaceId"])
ec2.detach_network_interface(AttachmentId=att["AttachmentId"])
ec2.get_waiter("network_interface_available").wait(NetworkInterfaceIds=[eni["NetworkInterfaceId"]], WaiterConfig=fast)
out["enis"] = ids("describe_network_interfaces", "NetworkInterfaces", "NetworkInterfaceId",
                  Filters=[{"Name": "tag:cluster.k8s.amazonaws.com/name", "Values": ["karplab"]},
                           {"Name": "status", "Values": ["available"]}])
out["eni_id"], out["volume_id"], out["snapshot_id"] = eni["NetworkInterfaceId"], vid, sid

ec2.delete_snapshot(SnapshotId=sid)
ec2.delete_volume(VolumeId=vid)
ec2.get_waiter("volume_deleted").wait(VolumeIds=[vid], WaiterConfig=fast)
ec2.delete_network_interface(NetworkInterfaceId=eni["NetworkInterfaceId"])
out["volume_gone"] = code(ec2.describe_volumes, VolumeIds=[vid])
out["snapshot_gone"] = code(ec2.describe_snapshots, SnapshotIds=[sid])
out["unknown_type"] = code(ec2.describe_instance_types, InstanceTypes=["m9z.huge"])

ec2.stop_instances(InstanceIds=[iid])
ec2.get_waiter("instance_stopped").wait(InstanceIds=[iid], WaiterConfig=fast)
ec2.start_instances(InstanceIds=[iid])
ec2.get_waiter("instance_running").wait(InstanceIds=[iid], WaiterConfig=fast)
ec2.terminate_instances(InstanceIds=[iid])
ec2.get_waiter("instance_terminated").wait(InstanceIds=[iid], WaiterConfig=fast)
out["regions"] = len(ec2.describe_regions()["Regions"])
print(json.dumps(out))
