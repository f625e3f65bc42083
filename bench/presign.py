"""A presigned GET URL (S3 SigV4, query-string auth, one hour) for one
object, path-style: what bench/cluster-reads.sh asks of the bucket
directly, as the anchor of storesrv's large GETs (issue 37). Standard
library only.

    python3 bench/presign.py ENDPOINT REGION ACCESS_KEY_ID SECRET /BUCKET/KEY
"""
import datetime, hashlib, hmac, sys, urllib.parse
endpoint, region, key, secret, path = sys.argv[1:6]
u = urllib.parse.urlparse(endpoint)
now = datetime.datetime.now(datetime.timezone.utc)
amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
scope = f"{day}/{region}/s3/aws4_request"
q = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{key}/{scope}",
     "X-Amz-Date": amz_date, "X-Amz-Expires": "3600", "X-Amz-SignedHeaders": "host"}
cq = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}" for k, v in sorted(q.items()))
canon = "\n".join(["GET", urllib.parse.quote(path, safe="/-_.~"), cq, f"host:{u.netloc}", "", "host", "UNSIGNED-PAYLOAD"])
sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canon.encode()).hexdigest()])
k = ("AWS4" + secret).encode()
for part in (day, region, "s3", "aws4_request"):
    k = hmac.new(k, part.encode(), hashlib.sha256).digest()
sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
print(f"{endpoint}{path}?{cq}&X-Amz-Signature={sig}")
