// Times one unary gRPC method from a native client (issue 29: SelectClasses p99 < 1 ms).
// The request arrives already serialized (bytes on stdin), so this client needs no generated
// code: it sends the bytes through grpc::GenericStub and checks every call ends OK.
// Usage: unary_latency TARGET /pkg.Service/Method CALLS WARMUP < request.bin
// Prints one latency in microseconds per line on stdout; exits 1 on the first failed call.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

bool call_once(grpc::GenericStub& stub, grpc::CompletionQueue& cq, const std::string& method,
               const std::string& payload, size_t* answer_bytes) {
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  grpc::Status status;
  auto reader = stub.PrepareUnaryCall(&context, method, request, &cq);
  reader->StartCall();
  reader->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok) return false;
  if (!status.ok()) {
    std::cerr << "call failed: " << status.error_code() << " " << status.error_message() << "\n";
    return false;
  }
  *answer_bytes = response.Length();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: " << argv[0] << " TARGET METHOD CALLS WARMUP < request.bin\n";
    return 2;
  }
  const std::string target = argv[1], method = argv[2];
  const long calls = std::atol(argv[3]), warmup = std::atol(argv[4]);
  std::string payload((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  size_t answer = 0;
  for (long i = 0; i < warmup; ++i)
    if (!call_once(stub, cq, method, payload, &answer)) return 1;
  std::vector<long> micros;
  micros.reserve(calls);
  for (long i = 0; i < calls; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!call_once(stub, cq, method, payload, &answer)) return 1;
    auto spent = std::chrono::steady_clock::now() - start;
    micros.push_back(std::chrono::duration_cast<std::chrono::microseconds>(spent).count());
  }
  for (long m : micros) std::printf("%ld\n", m);
  std::fprintf(stderr, "answer_bytes %zu\n", answer);
  return 0;
}
