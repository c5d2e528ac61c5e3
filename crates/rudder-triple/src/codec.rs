//! The tonic [`Codec`] of the wrapper messages: protobuf through prost. tonic does the gRPC framing
//! (the 5-byte length prefix) and bounds the message size on both sides (`payload`).

use std::marker::PhantomData;

use prost::Message;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// Encodes `E` and decodes `D`, both prost messages.
#[derive(Debug)]
pub(crate) struct WrapperCodec<E, D>(PhantomData<fn(E) -> D>);

impl<E, D> Default for WrapperCodec<E, D> {
    fn default() -> Self {
        WrapperCodec(PhantomData)
    }
}

impl<E, D> Codec for WrapperCodec<E, D>
where
    E: Message + Send + 'static,
    D: Message + Default + Send + 'static,
{
    type Encode = E;
    type Decode = D;
    type Encoder = MessageEncoder<E>;
    type Decoder = MessageDecoder<D>;

    fn encoder(&mut self) -> Self::Encoder {
        MessageEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        MessageDecoder(PhantomData)
    }
}

/// Writes one prost message into tonic's frame buffer.
#[derive(Debug)]
pub(crate) struct MessageEncoder<E>(PhantomData<fn(E)>);

impl<E: Message> Encoder for MessageEncoder<E> {
    type Item = E;
    type Error = Status;

    fn encode(&mut self, item: E, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // The buffer grows as needed; tonic checks the encoded length against the encoding limit.
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding the request wrapper: {e}")))
    }
}

/// Reads one prost message out of a frame tonic has already bounded by the decoding limit.
#[derive(Debug)]
pub(crate) struct MessageDecoder<D>(PhantomData<fn() -> D>);

impl<D: Message + Default> Decoder for MessageDecoder<D> {
    type Item = D;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<D>, Status> {
        // prost never allocates past the frame: every length it reads is checked against what is left.
        D::decode(src).map(Some).map_err(|e| {
            Status::internal(format!("the response is not a TripleResponseWrapper: {e}"))
        })
    }
}
