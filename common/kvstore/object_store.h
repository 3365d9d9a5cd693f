// Stores over HTTP: S3 (and S3-compatible services) and plain read-only HTTP servers.
#pragma once

#include <memory>
#include <string>

#include "common/kvstore/http_transport.h"
#include "common/kvstore/s3_credentials.h"
#include "common/kvstore/store.h"

namespace zarrd {

struct S3StoreOptions {
  std::string endpoint;  // "http(s)://host[:port]"; "" is AWS's endpoint for the region
  std::string bucket;
  std::string prefix;  // keys live under it ("" is the bucket's root)
  std::string region = "us-east-1";
  bool virtual_addressing = false;  // bucket.host/key rather than host/bucket/key
  S3CredentialSettings credentials;
  HttpOptions http;
  int list_page_keys = 1000;  // ListObjectsV2's max-keys
};
Result<std::shared_ptr<Store>> OpenS3Store(const S3StoreOptions& options);

struct HttpStoreOptions {
  std::string base_url;  // keys are read from base_url + "/" + key
  HttpOptions http;
};
// Read-only; List is UNIMPLEMENTED (plain HTTP cannot list), so arrays are opened by path.
Result<std::shared_ptr<Store>> OpenHttpStore(const HttpStoreOptions& options);

// The request counters of an S3 or HTTP store, nullptr for other stores.
const HttpStats* ObjectStoreStats(const Store& store);

}  // namespace zarrd
