# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The Ceph RGW edge: admin ops (our own SigV4 client), IAM and S3 (boto3), and the readiness probe."""
