# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The S3 calls the bucket flows need (path-style addressing: the gateway serves no bucket subdomains)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.boto import BotoEdge
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError


class RgwS3(BotoEdge):
    service = "s3"

    def create_bucket(self, bucket: str) -> None:
        """CreateBucket; a bucket the caller's account already owns is not an error."""
        try:
            with self.calling("s3:CreateBucket"):
                self.client.create_bucket(Bucket=bucket)
        except RgwError as exc:
            if exc.code != "BucketAlreadyOwnedByYou":
                raise

    def bucket_exists(self, bucket: str) -> bool:
        """HeadBucket: True when the bucket exists and the caller may see it, False on 404; a 403 (it
        exists, someone else's) is raised, so callers can tell "missing" from "not ours"."""
        try:
            with self.calling("s3:HeadBucket"):
                self.client.head_bucket(Bucket=bucket)
        except RgwError as exc:
            if exc.not_found:
                return False
            raise
        return True

    def get_bucket_policy(self, bucket: str) -> Optional[Dict[str, Any]]:
        """The bucket policy as a dict, or None when the bucket has none."""
        try:
            with self.calling("s3:GetBucketPolicy"):
                text = self.client.get_bucket_policy(Bucket=bucket)["Policy"]
        except RgwError as exc:
            if exc.code == "NoSuchBucketPolicy":
                return None
            raise
        return json.loads(text)

    def put_bucket_policy(self, bucket: str, document: Mapping[str, Any]) -> None:
        with self.calling("s3:PutBucketPolicy"):
            self.client.put_bucket_policy(Bucket=bucket, Policy=json.dumps(document, sort_keys=True))

    def delete_bucket_policy(self, bucket: str) -> None:
        with self.calling("s3:DeleteBucketPolicy"):
            self.client.delete_bucket_policy(Bucket=bucket)

    def list_buckets(self) -> List[str]:
        """Every bucket the caller sees (in an account: every bucket of the account)."""
        with self.calling("s3:ListBuckets"):
            return [b["Name"] for b in self.client.list_buckets().get("Buckets", [])]
